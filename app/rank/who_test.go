package rank

import (
	"slices"
	"testing"
)

func TestAskedOf(t *testing.T) {
	for _, tc := range []struct {
		q      string
		self   bool
		people []string
	}{
		{"what coffee should I buy?", true, nil},
		{"What coffee should I buy?", true, nil},
		{"where does my son live?", false, []string{"son"}},
		{"what does Sam like to drink?", false, []string{"sam"}},
		{"When did Caroline go to the LGBTQ support group?", false, []string{"caroline", "lgbtq"}},
		{"which bank do we use?", true, nil},
		{"how tall is the Eiffel tower", false, []string{"eiffel"}},
		{"what is the capital of france", false, nil},
	} {
		a := askedOf(tc.q)
		if a.self != tc.self || !slices.Equal(a.people, tc.people) {
			t.Errorf("askedOf(%q) = %+v, want self %v, people %v", tc.q, a, tc.self, tc.people)
		}
	}
}

func TestAsked_elsewhere(t *testing.T) {
	self := askedOf("what do I do for work?")
	sam := askedOf("what does Sam drink?")
	for _, tc := range []struct {
		a    asked
		text string
		want bool
	}{
		{self, "I work as a backend engineer", false},
		{self, "Colby works as a sound engineer", true},
		{self, "My partner Sam likes green tea, not coffee", true},
		{self, "Sam's birthday is on 14 March", true},
		{self, "Dentist appointment with Dr. Okafor on 3 December", false},
		{self, "Flying to Tokyo on 12 February", false},
		{self, "My birthday is July 2", false},
		{sam, "My partner Sam likes green tea", false},
		{sam, "I prefer dark roast coffee", true},
		{askedOf("what is the capital of france"), "Paris is the capital", false},
	} {
		if got := tc.a.elsewhere(tc.text); got != tc.want {
			t.Errorf("%+v.elsewhere(%q) = %v, want %v", tc.a, tc.text, got, tc.want)
		}
	}
}

func TestHasWord(t *testing.T) {
	for _, tc := range []struct {
		text, w string
		want    bool
	}{
		{"My partner Sam likes tea", "sam", true},
		{"Sam's birthday", "sam", true},
		{"Samantha likes tea", "sam", false},
		{"I saw SAM.", "sam", true},
		{"Caroline: I went", "caroline", true},
		{"", "sam", false},
	} {
		if got := hasWord(tc.text, tc.w); got != tc.want {
			t.Errorf("hasWord(%q, %q) = %v, want %v", tc.text, tc.w, got, tc.want)
		}
	}
}
