package reassembly

import (
	"fmt"
	"math/rand"
	"os"
	"testing"
	"time"
)

func TestZZHang(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for iter := 0; iter < 2000000; iter++ {
		n := rng.Intn(200)
		b := make([]byte, n)
		rng.Read(b)
		for i := range b {
			if i%6 == 0 && rng.Intn(3) > 0 {
				b[i] = byte(2 + rng.Intn(4))
			}
		}
		done := make(chan bool)
		go func() {
			defer func() { recover(); close(done) }()
			fuzzRun(&testing.T{}, b)
		}()
		select {
		case <-done:
		case <-time.After(3 * time.Second):
			os.WriteFile("/tmp/hang.bin", b, 0o644)
			fmt.Printf("hang %x\n", b)
			panic("hang")
		}
	}
}
