package api

// EncodingMismatches lists the answers of this test binary that encodeJSON
// wrote differently from encoding/json (encode_internal_test.go), and how
// many answers were compared.
func EncodingMismatches() ([]string, int) {
	mismatchMu.Lock()
	defer mismatchMu.Unlock()
	return append([]string(nil), mismatches...), encoded
}
