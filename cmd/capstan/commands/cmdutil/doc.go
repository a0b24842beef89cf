// Package cmdutil holds what capstan's command groups share: kubectl's
// connection flags, the flags that reach the repo server, Argo CD's flags
// that are accepted but refused, reading bounded local files, printing
// objects, and errors that carry an exit code.
package cmdutil
