package config

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/redis/go-redis/v9"
)

// ParseRedisURL turns a Redis URL into options for redis.NewUniversalClient:
//
//	redis://[user:pass@]host:port[/db]            one server
//	rediss://...                                  one server over TLS
//	redis+sentinel://[user:pass@]host:port[/db]?master_name=m[&addr=host2:port]
//	redis+cluster://[user:pass@]host:port[?addr=host2:port]
//	unix:///path/to/redis.sock[?db=0]              one server on a unix socket
//
// (rediss+sentinel and rediss+cluster add TLS; unix:// is how the CLI
// reaches the all-in-one's redis-server child). Query parameters are
// go-redis's own (dial_timeout, pool_size, ...). The process's one client
// serves both the store and asynq, so each works on every deployment:
// asynq's keys carry a hash tag per queue and server, the store's one per
// job or key family, so no transaction or script spans Cluster slots
// (cmd/benchq's TestServiceOnCluster and TestSentinelFailoverMidJob run
// the service on both).
func ParseRedisURL(raw string) (*redis.UniversalOptions, error) {
	u, err := url.Parse(raw)
	if ue := (*url.Error)(nil); errors.As(err, &ue) {
		// url.Error quotes the whole URL, and with it the password.
		return nil, fmt.Errorf("redis-url: %w", ue.Err)
	}
	if err != nil {
		return nil, fmt.Errorf("redis-url: %w", err)
	}
	if u.Scheme == "unix" {
		o, err := redis.ParseURL(raw)
		if err != nil {
			return nil, fmt.Errorf("redis-url: %w", err)
		}
		return fromSimple(o), nil
	}
	base, mode, _ := strings.Cut(u.Scheme, "+")
	if base != "redis" && base != "rediss" {
		return nil, fmt.Errorf("redis-url: scheme %q is not redis, rediss, redis+sentinel, redis+cluster or unix", u.Scheme)
	}
	plain := *u
	plain.Scheme = base
	switch mode {
	case "":
		o, err := redis.ParseURL(plain.String())
		if err != nil {
			return nil, fmt.Errorf("redis-url: %w", err)
		}
		return fromSimple(o), nil
	case "sentinel":
		o, err := redis.ParseFailoverURL(plain.String())
		if err != nil {
			return nil, fmt.Errorf("redis-url: %w", err)
		}
		if o.MasterName == "" {
			return nil, fmt.Errorf("redis-url: a sentinel URL needs ?master_name=")
		}
		return fromFailover(o), nil
	case "cluster":
		o, err := redis.ParseClusterURL(plain.String())
		if err != nil {
			return nil, fmt.Errorf("redis-url: %w", err)
		}
		return fromCluster(o), nil
	default:
		return nil, fmt.Errorf("redis-url: scheme %q is not redis, rediss, redis+sentinel, redis+cluster or unix", u.Scheme)
	}
}

func fromSimple(o *redis.Options) *redis.UniversalOptions {
	return &redis.UniversalOptions{
		Addrs:        []string{o.Addr},
		DB:           o.DB,
		Username:     o.Username,
		Password:     o.Password,
		ClientName:   o.ClientName,
		TLSConfig:    o.TLSConfig,
		MaxRetries:   o.MaxRetries,
		DialTimeout:  o.DialTimeout,
		ReadTimeout:  o.ReadTimeout,
		WriteTimeout: o.WriteTimeout,
		PoolSize:     o.PoolSize,
		MinIdleConns: o.MinIdleConns,
	}
}

func fromFailover(o *redis.FailoverOptions) *redis.UniversalOptions {
	return &redis.UniversalOptions{
		Addrs:            o.SentinelAddrs,
		MasterName:       o.MasterName,
		DB:               o.DB,
		Username:         o.Username,
		Password:         o.Password,
		SentinelUsername: o.SentinelUsername,
		SentinelPassword: o.SentinelPassword,
		ClientName:       o.ClientName,
		TLSConfig:        o.TLSConfig,
		MaxRetries:       o.MaxRetries,
		DialTimeout:      o.DialTimeout,
		ReadTimeout:      o.ReadTimeout,
		WriteTimeout:     o.WriteTimeout,
		PoolSize:         o.PoolSize,
		MinIdleConns:     o.MinIdleConns,
	}
}

func fromCluster(o *redis.ClusterOptions) *redis.UniversalOptions {
	return &redis.UniversalOptions{
		Addrs:         o.Addrs,
		IsClusterMode: true, // even with a single seed address
		Username:      o.Username,
		Password:      o.Password,
		ClientName:    o.ClientName,
		TLSConfig:     o.TLSConfig,
		MaxRetries:    o.MaxRetries,
		DialTimeout:   o.DialTimeout,
		ReadTimeout:   o.ReadTimeout,
		WriteTimeout:  o.WriteTimeout,
		PoolSize:      o.PoolSize,
		MinIdleConns:  o.MinIdleConns,
	}
}
