package client

// modelValue reports whether v is already of a type the codecs carry
// (nil, bool, numbers, string, []byte, []any, map[string]any); nested
// values are checked by the codec when it encodes them.
func modelValue(v any) bool {
	switch v.(type) {
	case nil, bool, string, []byte, []any, map[string]any,
		int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64,
		float32, float64:
		return true
	}
	return false
}
