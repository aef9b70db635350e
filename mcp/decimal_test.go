package mcp

import "testing"

func TestDecimal_Cmp(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"0", "-0", 0}, {"0", "0.000e5", 0}, {"1", "1.0", 0}, {"1", "10e-1", 0}, {"100", "1e2", 0},
		{"1", "2", -1}, {"-1", "1", -1}, {"-2", "-1", -1}, {"0.5", "1", -1}, {"-0.5", "0", -1},
		{"9007199254740993", "9007199254740992", 1}, {"1e400", "1.7976931348623157e308", 1},
		{"-1e400", "-1e399", -1}, {"1e-400", "0", 1}, {"0.12", "0.123", -1}, {"120", "12.3", 1},
		{"1e99999999999999999999", "1e100", 1}, {"1e-99999999999999999999", "1e-100", -1},
	} {
		t.Run(tc.a+"_"+tc.b, func(t *testing.T) {
			if got := parseDecimal(tc.a).cmp(parseDecimal(tc.b)); got != tc.want {
				t.Errorf("cmp(%s, %s) = %d, want %d", tc.a, tc.b, got, tc.want)
			}
			if got := parseDecimal(tc.b).cmp(parseDecimal(tc.a)); got != -tc.want {
				t.Errorf("cmp(%s, %s) = %d, want %d", tc.b, tc.a, got, -tc.want)
			}
		})
	}
}
