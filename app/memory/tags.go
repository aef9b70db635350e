package memory

// Tags across memories: tagging several at once, and renaming or merging a tag everywhere.

import (
	"errors"
	"fmt"
	"slices"

	"github.com/ownsona/ownsona/app/memtext"
)

// AddTags adds tags to each of ids in one transaction, keeping the tags each memory has. The
// tags are normalized first (memtext.NormalizeTags); an invalid one fails the whole call with
// an *InputError on "tags[i]", before anything is read. Each memory then succeeds or fails on
// its own, in its Updated: Changed is ["tags"], or empty when it had them all already; Err is
// ErrNotFound, ErrForgotten, an *InputError on "tags" when it would carry more than
// memtext.MaxTags, or on "ids[i]" for an id listed twice. err is that, or a storage failure.
func (s *Store) AddTags(ids []uint64, tags []string) ([]Updated, error) {
	add, err := memtext.NormalizeTags(tags)
	if err != nil {
		return nil, err
	}
	if len(add) == 0 {
		return nil, &InputError{Field: "tags", Reason: "name at least one tag"}
	}
	now := s.now().UTC()
	changed := map[uint64]bool{}
	errs, err := s.modify(ids, func(m *Memory) (bool, error) {
		if m.Deleted() {
			return false, forgotten(m.ID, "; restore it before tagging it")
		}
		merged := slices.Clone(m.Tags)
		for _, t := range add {
			if !slices.Contains(merged, t) {
				merged = append(merged, t)
			}
		}
		if len(merged) == len(m.Tags) {
			return false, nil
		}
		if len(merged) > memtext.MaxTags {
			return false, &InputError{Field: "tags", Reason: fmt.Sprintf("memory %d would have %d distinct tags; the limit is %d", m.ID, len(merged), memtext.MaxTags)}
		}
		m.Tags, m.UpdatedAt = merged, now
		changed[m.ID] = true
		return true, nil
	}, nil)
	if err != nil {
		return nil, err
	}
	out := make([]Updated, len(ids))
	seen := map[uint64]int{}
	for i, id := range ids {
		out[i] = Updated{ID: id, Changed: []string{}}
		if j, dup := seen[id]; dup {
			out[i].Err = &InputError{Field: fmt.Sprintf("ids[%d]", i), Reason: fmt.Sprintf("memory %d is already listed at ids[%d]", id, j)}
			continue
		}
		seen[id] = i
		out[i].Err = errs[id]
		if changed[id] {
			out[i].Changed = []string{"tags"}
		}
	}
	return out, nil
}

// MergeTags replaces each tag of from by into on every memory that carries it, forgotten ones
// included (so that a restored memory does not bring an old tag back), in one transaction, and
// returns the ids it changed, ascending. A memory that carries into already keeps it once, where
// it was. Tags are normalized first: an invalid one is an *InputError on "from[i]" or "into",
// and so is an empty from. A tag of from equal to into is left alone. err is that, or a storage
// failure, after which nothing was changed.
func (s *Store) MergeTags(from []string, into string) ([]uint64, error) {
	to, err := memtext.NormalizeTag(into)
	if err != nil {
		return nil, &InputError{Field: "into", Reason: err.(*InputError).Reason}
	}
	if len(from) == 0 {
		return nil, &InputError{Field: "from", Reason: "name at least one tag to rename"}
	}
	old := make([]string, 0, len(from))
	for i, f := range from {
		t, err := memtext.NormalizeTag(f)
		if err != nil {
			return nil, &InputError{Field: fmt.Sprintf("from[%d]", i), Reason: err.(*InputError).Reason}
		}
		if t != to && !slices.Contains(old, t) {
			old = append(old, t)
		}
	}
	if len(old) == 0 {
		return nil, nil
	}
	now := s.now().UTC()
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	s.drainLocked()
	var ids []uint64
	s.mu.RLock()
	for _, id := range s.ids {
		if slices.ContainsFunc(s.mems[id].Tags, func(t string) bool { return slices.Contains(old, t) }) {
			ids = append(ids, id)
		}
	}
	s.mu.RUnlock()
	_, err = s.modifyLocked(ids, func(m *Memory) (bool, error) {
		tags := make([]string, 0, len(m.Tags))
		for _, t := range m.Tags {
			if slices.Contains(old, t) {
				t = to
			}
			if !slices.Contains(tags, t) {
				tags = append(tags, t)
			}
		}
		m.Tags, m.UpdatedAt = tags, now
		return true, nil
	}, nil)
	if err != nil {
		return nil, err
	}
	return ids, nil
}

// RenameTag renames the tag from to to on every memory (MergeTags of one tag): when some
// memories carry to already, the two tags become one.
func (s *Store) RenameTag(from, to string) ([]uint64, error) {
	ids, err := s.MergeTags([]string{from}, to)
	var ie *InputError
	if err != nil && errors.As(err, &ie) && ie.Field == "from[0]" {
		return nil, &InputError{Field: "from", Reason: ie.Reason}
	}
	return ids, err
}
