// Package apikey is what an API key is: how a key is minted (a "bq_" prefix
// on 32 bytes from crypto/rand, shown once), how it is remembered (only its
// SHA-256, so a copy of Redis yields no usable key), how a presented key is
// checked against the stored record (in constant time, and refused once
// revoked), and the quota a key carries, merged over the service-wide
// defaults field by field.
//
// It holds no I/O: the store persists Key records, the API calls
// Authenticate with the store as its KeyFinder, and the CLI mints keys with
// New.
package apikey
