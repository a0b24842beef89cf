package archive

import (
	"errors"
	"io"
)

// Copy copies the directory src to dst, as packing and unpacking it would:
// directories, regular files and symbolic links (as links), at most
// maxBytes of files. dst must not exist or be empty.
func Copy(src, dst string, maxBytes int64) error {
	r, w := io.Pipe()
	packed := make(chan error, 1)
	go func() {
		_, err := pack(w, src, PackOptions{MaxBytes: maxBytes})
		_ = w.CloseWithError(err)
		packed <- err
	}()
	err := Untar(r, dst, Options{MaxBytes: maxBytes, Symlinks: true})
	_ = r.CloseWithError(errors.New("copy stopped"))
	perr := <-packed
	if err != nil {
		return err
	}
	return perr // a packing error still ends the stream cleanly
}
