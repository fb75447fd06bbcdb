package loadgen

import "syscall"

// ipBindAddressNoPort is IP_BIND_ADDRESS_NO_PORT (linux/in.h, since
// Linux 4.2): bind the address now, choose the port at connect, where the
// four-tuple is known and a port may serve one connection per source
// address and destination.
const ipBindAddressNoPort = 24

// bindSource binds an unconnected IPv4 socket to a source address,
// leaving the port to connect.
func bindSource(fd uintptr, addr [4]byte) error {
	if err := syscall.SetsockoptInt(int(fd), syscall.IPPROTO_IP, ipBindAddressNoPort, 1); err != nil {
		return err
	}
	return syscall.Bind(int(fd), &syscall.SockaddrInet4{Addr: addr})
}
