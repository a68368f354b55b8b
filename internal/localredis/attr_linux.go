package localredis

import "syscall"

func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{
		// A process group of its own: a Ctrl-C at the terminal reaches
		// benchq alone, which hands back its work to Redis before it
		// stops the child.
		Setpgid: true,
		// benchq killed by SIGKILL must not leave the child running;
		// SIGTERM lets it flush its file first.
		Pdeathsig: syscall.SIGTERM,
	}
}
