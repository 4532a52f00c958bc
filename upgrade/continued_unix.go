//go:build unix

package upgrade

import (
	"os"
	"os/signal"
	"syscall"
	"time"
)

func watchContinued() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGCONT)
	go func() {
		for range ch {
			continued.Store(time.Now().UnixNano())
		}
	}()
}
