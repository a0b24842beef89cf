package scm

import "fmt"

// pages gathers a paged listing: fetch returns one page's items and the
// next page's number (0 after the last). More than limit items is an
// error naming what was listed, so an endless page chain ends.
func pages[T any](limit int, what string, fetch func(page int) ([]T, int, error)) ([]T, error) {
	var out []T
	for page := 1; ; {
		items, next, err := fetch(page)
		if err != nil {
			return nil, err
		}
		out = append(out, items...)
		if len(out) > limit {
			return nil, fmt.Errorf("%s: more than %d; the generator stops there", what, limit)
		}
		if next == 0 || next == page {
			return out, nil
		}
		page = next
	}
}
