// Package loopback gives tests loopback addresses of their own, so a
// server that must listen on a fixed port (Dex on 5556, a pod's container
// port) does not meet another test's on the same machine.
package loopback

import (
	"fmt"
	"math/rand/v2"
)

// Address returns a random address of 127.0.0.0/8 other than 127.0.0.1;
// Linux answers on all of them without configuration.
func Address() string {
	return fmt.Sprintf("127.%d.%d.%d", 1+rand.IntN(250), rand.IntN(256), 1+rand.IntN(250))
}
