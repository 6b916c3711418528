package controllers_test

import (
	"errors"
	"io"
	"net"
	"sync"
)

// tcpProxy forwards connections from an address of its own to another: the
// remote cluster as the manager reaches it, which a test takes away (every
// connection closed, none accepted) and brings back on the same address.
type tcpProxy struct {
	addr, target string

	mu       sync.Mutex
	listener net.Listener
	conns    map[net.Conn]struct{}
}

func newTCPProxy(target string) (*tcpProxy, error) {
	p := &tcpProxy{target: target, conns: map[net.Conn]struct{}{}}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p.addr = l.Addr().String()
	p.serve(l)
	return p, nil
}

// Up accepts connections again, on the same address; a proxy up stays so.
func (p *tcpProxy) Up() error {
	p.mu.Lock()
	up := p.listener != nil
	p.mu.Unlock()
	if up {
		return nil
	}
	l, err := net.Listen("tcp", p.addr)
	if err != nil {
		return err
	}
	p.serve(l)
	return nil
}

// Down closes every connection and accepts none.
func (p *tcpProxy) Down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.listener != nil {
		_ = p.listener.Close()
		p.listener = nil
	}
	for c := range p.conns {
		_ = c.Close()
	}
	clear(p.conns)
}

func (p *tcpProxy) serve(l net.Listener) {
	p.mu.Lock()
	p.listener = l
	p.mu.Unlock()
	go func() {
		for {
			in, err := l.Accept()
			if errors.Is(err, net.ErrClosed) {
				return
			}
			if err != nil {
				continue
			}
			go p.forward(in)
		}
	}()
}

func (p *tcpProxy) forward(in net.Conn) {
	out, err := net.Dial("tcp", p.target)
	if err != nil {
		_ = in.Close()
		return
	}
	if !p.track(in, out) {
		return
	}
	go func() {
		_, _ = io.Copy(out, in)
		_ = out.Close()
	}()
	_, _ = io.Copy(in, out)
	_ = in.Close()
}

// track notes a forwarded connection's two ends, unless the proxy went down.
func (p *tcpProxy) track(in, out net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.listener == nil {
		_, _ = in.Close(), out.Close()
		return false
	}
	p.conns[in], p.conns[out] = struct{}{}, struct{}{}
	return true
}
