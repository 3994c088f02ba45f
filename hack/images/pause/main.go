// Command pause is the pod sandbox process of the local cluster. Every pod's namespaces are held
// open by one sandbox container; upstream ships a tiny C program for this, but no registry is
// reachable here, so this static Go equivalent is built into the image containerd's CRI plugin
// names as sandbox_image.
//
// As PID 1 of a pod that shares its process namespace it must reap orphaned children, and it
// must exit promptly on SIGTERM/SIGINT so pod deletion does not wait for the grace period.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	for sig := range sigs {
		if sig != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
