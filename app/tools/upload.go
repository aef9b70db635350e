package tools

import "github.com/ownsona/ownsona/rpc"

// Uploads is what the import tools need of the server: upload tokens bound to the caller and
// the progress of imports. (Filled in by the uploads work of issue 15.)
type Uploads interface{}

// importTools are prepare_import_upload and import_status, offered when the server takes
// uploads.
func (s *Server) importTools() []*rpc.Tool {
	if s.uploads == nil {
		return nil
	}
	return nil
}
