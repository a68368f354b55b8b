//go:build !unix

package localredis

import "syscall"

func childAttr() *syscall.SysProcAttr { return nil }
