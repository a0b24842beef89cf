package settings

import (
	"crypto/sha256"
	"encoding/base32"
	"encoding/binary"
	"strings"
)

// SecretNameHash is the part of a Secret's name that tells one
// repository, credential template or cluster from another: 128 bits of
// SHA-256 over parts (each length-prefixed, so ("ab","c") and ("a","bc")
// differ), in lower-case base32 (26 characters, valid in a name). Finding
// two inputs with one name is out of reach, so a name never leads one
// tenant's write to another's Secret.
func SecretNameHash(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write(binary.LittleEndian.AppendUint64(nil, uint64(len(p))))
		h.Write([]byte(p))
	}
	sum := h.Sum(nil)[:16]
	return strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(sum))
}
