package main

import (
	"fmt"
	"net"
	"net/http"
	"sync"

	"golang.org/x/net/netutil"

	"github.com/openpatience/solitaire/api"
	"github.com/openpatience/solitaire/persistence"
)

// Bounds of the HTTP connections the server holds open: each is a file
// descriptor, a goroutine and its buffers, however little its client sends
// (a keep-alive connection pinged now and then lasts for ever).
const (
	// defaultMaxConnsPerAddress bounds one client address's connections
	// (SOLITAIRE_MAX_CONNS_PER_ADDRESS): twice its live streams
	// (api.DefaultMaxStreamsPerAddress, 64), so that an address holding
	// every stream it may still has as many connections for requests; far
	// more than a household or an office behind one address keeps open.
	defaultMaxConnsPerAddress = 128
	// defaultMaxConns bounds the server's connections when the open-file
	// limit allows more (SOLITAIRE_MAX_CONNS): about 200 MiB of
	// goroutines and buffers at most, and more than twice the default
	// bound of live streams (api.DefaultMaxStreams), which are connections
	// too.
	defaultMaxConns = 10_000
	// fileReserve is the open files kept for everything that is neither a
	// client's connection nor a database connection: standard input,
	// output and error, the listeners (the API's, pprof's), the SQLite
	// database, its WAL and shared-memory files, the log key file, a
	// connection accepted only to be refused, the resolver's sockets.
	fileReserve = 64
)

// connRoom is the most connections the server may hold under an
// open-file limit of nofile (0 = unknown: 1,000,000) with dbConns
// connections in the database pool: the limit less the pool, the LISTEN
// connection of live streams, and fileReserve. At most 1,000,000; below 1
// when the limit leaves no room at all.
func connRoom(nofile uint64, dbConns int) int {
	const most = 1_000_000
	if nofile == 0 || nofile > most {
		nofile = most
	}
	return int(nofile) - dbConns - 1 - fileReserve
}

// connBound is the default of SOLITAIRE_MAX_CONNS under an open-file limit
// of nofile (0 = unknown) with dbConns database connections:
// defaultMaxConns, but at most connRoom. Under `ulimit -n 1024` with the
// default pool of 20, 939 (the live streams' bound there is 512: see
// streamBound).
func connBound(nofile uint64, dbConns int) int {
	return min(defaultMaxConns, connRoom(nofile, dbConns))
}

// loadConns reads SOLITAIRE_MAX_CONNS_PER_ADDRESS (1..1,000,000, default
// defaultMaxConnsPerAddress) and SOLITAIRE_MAX_CONNS (1..connRoom, default
// connBound) under an open-file limit of nofile (0 = unknown), after the
// database settings (the pool's size counts against the limit). Errors
// name the variable and the range; an open-file limit with no room for a
// single connection is an error too.
func (c *config) loadConns(getenv func(string) string, nofile uint64) error {
	c.maxConnsPerAddress = defaultMaxConnsPerAddress
	if err := intVar(getenv, "SOLITAIRE_MAX_CONNS_PER_ADDRESS", 1, 1_000_000, "connections", &c.maxConnsPerAddress); err != nil {
		return err
	}
	dbConns := c.store.MaxConns
	if dbConns == 0 {
		dbConns = persistence.DefaultMaxConns
	}
	room := connRoom(nofile, dbConns)
	if room < 1 {
		return fmt.Errorf("the open-file limit (%d) leaves no room for connections beside SOLITAIRE_DB_MAX_CONNS (%d), "+
			"the LISTEN connection and %d other files: raise it (ulimit -n) or lower SOLITAIRE_DB_MAX_CONNS", nofile, dbConns, fileReserve)
	}
	c.maxConns = connBound(nofile, dbConns)
	return intVar(getenv, "SOLITAIRE_MAX_CONNS", 1, room, fmt.Sprintf("connections (the open-file limit %d less SOLITAIRE_DB_MAX_CONNS, "+
		"the LISTEN connection and %d other files)", nofile, fileReserve), &c.maxConns)
}

// connLimiter is the API's listener with its bound of open connections:
// at most perAddress per client address (api.ClientKey: an IPv4 address
// or an IPv6 /64) and total in the server. A connection is idle from its
// accept until its first request begins, and again between requests
// (http.Server.ConnState: connState); it is active while a request is
// served, a live stream included. A new connection that would pass its
// address's bound replaces that address's longest-idle connection, or is
// refused if all of them are active; one that would pass the total
// replaces the longest-idle connection of the address that holds the most
// among those with an idle one, or is refused if no connection is idle. A
// refused connection is closed at once, before anything is read from it.
// Closing an idle keep-alive connection is what RFC 9112 §9.5 lets a
// server do at any time: clients open another (Go's http.Transport does
// so by itself for a request it may repeat).
//
// Beneath it, netutil.LimitListener holds the descriptors the listener
// takes to total+1 (the held connections and the one being judged) by
// itself, whatever this bookkeeping says; it does not judge, since at its
// bound it would make a new connection wait for an old one to close by
// itself (two minutes for an idle one) instead of replacing it.
type connLimiter struct {
	net.Listener
	perAddress, total int

	mu         sync.Mutex
	addrs      map[string]*connGroup // by api.ClientKey
	open       int                   // connections held
	ticks      uint64                // orders the moments connections became idle
	closedIdle int64                 // connections closed to make room
	refused    int64                 // connections refused
}

// connGroup is one address's connections, and how many are idle.
type connGroup struct {
	conns map[*limitedConn]struct{}
	idle  int
}

// limitedConn is a connection held by a connLimiter.
type limitedConn struct {
	net.Conn
	lim *connLimiter
	key string // its address's api.ClientKey
	// Under lim.mu: whether it is idle and since when (a tick of lim),
	// and whether it has left the books (closed, or chosen to be).
	idle  bool
	since uint64
	gone  bool
}

// newConnLimiter bounds ln's connections to perAddress per client address
// and total in all (each at least 1); set the server's ConnState to its
// connState.
func newConnLimiter(ln net.Listener, perAddress, total int) *connLimiter {
	return &connLimiter{Listener: netutil.LimitListener(ln, total+1), perAddress: perAddress, total: total,
		addrs: map[string]*connGroup{}}
}

// Accept returns the next connection admitted: connections that are
// refused are closed here and never returned. Its errors are the
// listener's.
func (l *connLimiter) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		admitted, victim := l.admit(c)
		if victim != nil {
			victim.Conn.Close() // its server goroutine sees the close and ends
		}
		if admitted != nil {
			return admitted, nil
		}
		c.Close()
	}
}

// admit decides on the new connection c: the connection to return for it
// (nil if it is refused), and the held connection to close to make room
// (nil if none), already off the books.
func (l *connLimiter) admit(c net.Conn) (admitted, victim *limitedConn) {
	key := connKey(c.RemoteAddr())
	l.mu.Lock()
	defer l.mu.Unlock()
	full := false
	if g := l.addrs[key]; g != nil && len(g.conns) >= l.perAddress {
		full, victim = true, g.longestIdle()
	} else if l.open >= l.total {
		full, victim = true, l.busiestIdle()
	}
	if full && victim == nil {
		l.refused++
		return nil, nil
	}
	if victim != nil {
		l.drop(victim)
		l.closedIdle++
	}
	admitted = &limitedConn{Conn: c, lim: l, key: key, idle: true, since: l.tick()}
	g := l.addrs[key]
	if g == nil {
		g = &connGroup{conns: map[*limitedConn]struct{}{}}
		l.addrs[key] = g
	}
	g.conns[admitted] = struct{}{}
	g.idle++
	l.open++
	return admitted, victim
}

// connKey is the api.ClientKey of a connection's remote address, as the
// API reads it from the request's RemoteAddr.
func connKey(a net.Addr) string {
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return api.ClientKey(a.String())
	}
	return api.ClientKey(host)
}

// tick is the next moment of l's order of events; l.mu is held.
func (l *connLimiter) tick() uint64 {
	l.ticks++
	return l.ticks
}

// longestIdle is g's connection idle the longest, nil if none is idle.
func (g *connGroup) longestIdle() *limitedConn {
	var best *limitedConn
	if g.idle == 0 {
		return nil
	}
	for c := range g.conns {
		if c.idle && (best == nil || c.since < best.since) {
			best = c
		}
	}
	return best
}

// busiestIdle is the longest-idle connection of the address that holds
// the most connections among those with an idle one (of equals, the
// address whose key sorts first), nil if no connection is idle; l.mu is
// held.
func (l *connLimiter) busiestIdle() *limitedConn {
	var best *connGroup
	var bestKey string
	for key, g := range l.addrs {
		if g.idle > 0 && (best == nil || len(g.conns) > len(best.conns) || (len(g.conns) == len(best.conns) && key < bestKey)) {
			best, bestKey = g, key
		}
	}
	if best == nil {
		return nil
	}
	return best.longestIdle()
}

// drop takes c off the books; l.mu is held.
func (l *connLimiter) drop(c *limitedConn) {
	if c.gone {
		return
	}
	c.gone = true
	g := l.addrs[c.key]
	delete(g.conns, c)
	if c.idle {
		g.idle--
	}
	if len(g.conns) == 0 {
		delete(l.addrs, c.key)
	}
	l.open--
}

// connState is the http.Server's ConnState hook: it keeps each held
// connection's idle or active state (a hijacked connection counts as
// active until it is closed), and takes a closed one off the books.
func (l *connLimiter) connState(nc net.Conn, s http.ConnState) {
	c, ok := nc.(*limitedConn)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if c.gone {
		return
	}
	switch s {
	case http.StateActive, http.StateHijacked:
		if c.idle {
			c.idle = false
			l.addrs[c.key].idle--
		}
	case http.StateIdle:
		if !c.idle {
			c.idle, c.since = true, l.tick()
			l.addrs[c.key].idle++
		}
	case http.StateClosed:
		l.drop(c)
	}
}

// Close takes the connection off the books and closes it.
func (c *limitedConn) Close() error {
	c.lim.mu.Lock()
	c.lim.drop(c)
	c.lim.mu.Unlock()
	return c.Conn.Close()
}

// connStats are a connLimiter's counts: connections held now, closed to
// make room, and refused, since the start.
type connStats struct {
	open                int
	closedIdle, refused int64
}

// stats are l's counts now.
func (l *connLimiter) stats() connStats {
	l.mu.Lock()
	defer l.mu.Unlock()
	return connStats{open: l.open, closedIdle: l.closedIdle, refused: l.refused}
}
