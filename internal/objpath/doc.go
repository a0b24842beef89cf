// Package objpath names and changes fields of JSON documents as decoded
// into Go (objects as map[string]any, lists as []any): RFC 6901 JSON
// pointers and jq path expressions both become a Path, which Get, Set and
// Remove follow.
//
// It is the one place the engine's ignoreDifferences, a sync's
// RespectIgnoreDifferences and the ApplicationSet controller's
// ignoreApplicationDifferences address fields, so all three read a pointer
// the same way and bound a jq expression the same way.
package objpath
