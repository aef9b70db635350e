package web

import "time"

// SetUploadRate shortens the minimum rate of s's upload bodies for a test: at least perWindow
// bytes in each window, the first of which starts after grace.
func SetUploadRate(s *Server, perWindow int64, window, grace time.Duration) {
	s.uploadRate = uploadRate{perWindow: perWindow, window: window, grace: grace}
}

// MaxUploads is how many upload bodies are read at once.
const MaxUploads = maxUploads
