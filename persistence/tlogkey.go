package persistence

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"golang.org/x/mod/sumdb/note"
)

// ErrNoOrigin is OpenLog's error when a new key must be generated (no
// key configured, no key file yet, none kept in the database) and
// LogConfig names neither an Origin nor a DefaultOrigin for it. A log's
// origin is its identity: clients and witnesses know the log by it, and a
// key's name never changes, so it is chosen by whoever runs the log, not
// guessed from the machine it first starts on.
var ErrNoOrigin = errors.New("persistence: a new log key needs a name: give LogConfig.Origin")

// signerKey finds the log's signer key as LogConfig describes.
func (s *Store) signerKey(ctx context.Context, cfg LogConfig) (string, error) {
	name := cfg.Origin
	if name == "" {
		name = cfg.DefaultOrigin
	}
	switch {
	case cfg.Key != "":
		return strings.TrimSpace(cfg.Key), nil
	case cfg.KeyFile != "":
		b, err := os.ReadFile(cfg.KeyFile)
		if err == nil {
			return strings.TrimSpace(string(b)), nil
		}
		if !errors.Is(err, fs.ErrNotExist) || !cfg.CreateKeyFile {
			return "", fmt.Errorf("persistence: log key file: %w", err)
		}
		if name == "" {
			return "", fmt.Errorf("%w (key file %s does not exist)", ErrNoOrigin, cfg.KeyFile)
		}
		skey, _, err := note.GenerateKey(rand.Reader, name)
		if err != nil {
			return "", fmt.Errorf("persistence: log key: %w", err)
		}
		// O_EXCL: two processes starting at once must not each write a key.
		f, err := os.OpenFile(cfg.KeyFile, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			return s.signerKey(ctx, LogConfig{KeyFile: cfg.KeyFile, Origin: cfg.Origin})
		}
		if err != nil {
			return "", fmt.Errorf("persistence: log key file: %w", err)
		}
		_, err = f.WriteString(skey + "\n")
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return "", fmt.Errorf("persistence: log key file: %w", err)
		}
		if cfg.Origin == "" {
			s.log.Warn("log key created with the default origin; a log others rely on is named by SOLITAIRE_LOG_ORIGIN",
				"file", cfg.KeyFile, "origin", name)
		} else {
			s.log.Info("log key created", "file", cfg.KeyFile, "origin", name)
		}
		return skey, nil
	case s.dialect == DialectPostgres:
		// A key kept by an earlier server is the log's, whatever it is named.
		stored, err := s.storedSignerKey(ctx)
		if err != nil || stored != "" {
			return stored, err
		}
		if name == "" {
			return "", fmt.Errorf("%w (PostgreSQL holds no key yet)", ErrNoOrigin)
		}
		skey, _, err := note.GenerateKey(rand.Reader, name)
		if err != nil {
			return "", fmt.Errorf("persistence: log key: %w", err)
		}
		// The first server to get here stores its key; every other one
		// reads that one, so all processes sign with one key.
		res := s.db.WithContext(ctx).Exec(`UPDATE tlog_state SET signer_key = ? WHERE id = 1 AND signer_key = ''`, skey)
		if res.Error != nil {
			return "", wrap("log key", res.Error)
		}
		if res.RowsAffected == 1 {
			s.log.Warn("log key generated and kept in the database (tlog_state.signer_key); configure SOLITAIRE_LOG_KEY or SOLITAIRE_LOG_KEY_FILE for production",
				"origin", name)
			return skey, nil
		}
		return s.storedSignerKey(ctx)
	}
	return "", errors.New("persistence: log key: give LogConfig.Key or KeyFile")
}

// storedSignerKey is the signer key kept in the database
// (tlog_state.signer_key), "" if none is.
func (s *Store) storedSignerKey(ctx context.Context) (string, error) {
	var stored string
	if err := s.db.WithContext(ctx).Raw(`SELECT signer_key FROM tlog_state WHERE id = 1`).Row().Scan(&stored); err != nil {
		return "", wrap("log key", err)
	}
	return stored, nil
}

// verifierKey is the verifier key of signer key skey (note.GenerateKey's
// second result): the name, and the Ed25519 public key of the private
// key's seed. Errors: skey is not an Ed25519 note signer key.
func verifierKey(skey string) (string, error) {
	parts := strings.SplitN(skey, "+", 5)
	if len(parts) != 5 || parts[0] != "PRIVATE" || parts[1] != "KEY" {
		return "", errors.New("persistence: log key: not a note signer key (PRIVATE+KEY+name+hash+key)")
	}
	key, err := base64.StdEncoding.DecodeString(parts[4])
	// The key is the algorithm byte (1 = Ed25519) and the 32-byte seed.
	if err != nil || len(key) != 1+ed25519.SeedSize || key[0] != 1 {
		return "", errors.New("persistence: log key: not an Ed25519 note signer key")
	}
	pub := ed25519.NewKeyFromSeed(key[1:]).Public().(ed25519.PublicKey)
	vkey, err := note.NewEd25519VerifierKey(parts[2], pub)
	if err != nil {
		return "", fmt.Errorf("persistence: log key: %w", err)
	}
	return vkey, nil
}
