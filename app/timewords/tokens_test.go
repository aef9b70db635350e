package timewords

import (
	"reflect"
	"testing"
)

func TestTokenize(t *testing.T) {
	for _, tc := range []struct {
		query string
		want  []token
	}{
		{"", nil},
		{"Last week", []token{
			{w: "last", start: 0, end: 4},
			{w: "week", start: 5, end: 9, join: true},
		}},
		{"since 2024-03-01!", []token{
			{w: "since", start: 0, end: 5},
			{w: "2024-03-01", start: 6, end: 16, join: true},
		}},
		{"March 12, 2024", []token{
			{w: "march", start: 0, end: 5},
			{w: "12", start: 6, end: 8, join: true},
			{w: "2024", start: 10, end: 14, comma: true},
		}},
		{"May's 12th-floor", []token{
			{w: "may", start: 0, end: 3, poss: true},
			{w: "s", start: 4, end: 5},
			{w: "12th", start: 6, end: 10, join: true},
			{w: "floor", start: 11, end: 16, join: true},
		}},
		{"in. Mayday\xff", []token{
			{w: "in", start: 0, end: 2},
			{w: "mayday", start: 4, end: 10},
		}},
	} {
		t.Run(tc.query, func(t *testing.T) {
			if got := tokenize(tc.query); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("tokenize(%q)\n got %+v\nwant %+v", tc.query, got, tc.want)
			}
		})
	}
}
