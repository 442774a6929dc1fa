package mcp

import (
	"context"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/custodian-dev/custodian/app"
	"github.com/custodian-dev/custodian/reason"
)

// uriTemplate matches every managed document: the key is a path.
const uriTemplate = URIPrefix + "{+key}"

func (s *Server) addResources() {
	s.sdk.AddResourceTemplate(&sdk.ResourceTemplate{
		Name:        "document",
		Title:       "A managed document",
		Description: "A document the custodian keeps, by its key (its path relative to the project root): .asdd/state/manifest.json, .impl/manifest.json, .agents/tmp/state.json, .workflow/.cycle/<id>.json. Read-only: change it through the tools.",
		URITemplate: uriTemplate,
		MIMEType:    "application/json",
	}, s.readResource)
}

// listResources lists the managed documents that exist now.
func (s *Server) listResources(ctx context.Context) (*sdk.ListResourcesResult, error) {
	ctx, r, err := s.reader(ctx)
	if err != nil {
		return nil, protocolError(err)
	}
	keys, err := r.Keys(ctx)
	if err != nil {
		return nil, protocolError(err)
	}
	keys = app.Documents(keys) // the custodian's documents, no other key
	// TTL 0: a list is stale at once (documents come and go); private: it
	// is this project's.
	res := &sdk.ListResourcesResult{Resources: []*sdk.Resource{}, Cacheable: sdk.Cacheable{TTLMs: 0, CacheScope: "private"}}
	for _, k := range keys {
		res.Resources = append(res.Resources, &sdk.Resource{
			URI:         URIPrefix + k,
			Name:        k,
			Description: describe(k),
			MIMEType:    "application/json",
		})
	}
	return res, nil
}

// readResource returns the latest committed value of a document, as
// stored.
func (s *Server) readResource(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
	key, err := keyOf(req.Params.URI)
	if err != nil {
		return nil, err
	}
	ctx, r, err := s.reader(ctx)
	if err != nil {
		return nil, protocolError(err)
	}
	doc, err := r.Doc(ctx, key)
	if err != nil {
		return nil, protocolError(err)
	}
	if doc.Value == nil {
		return nil, sdk.ResourceNotFoundError(req.Params.URI)
	}
	return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{
		URI:      req.Params.URI,
		MIMEType: "application/json",
		Text:     string(doc.Value),
		Meta:     sdk.Meta{"revision": doc.Revision},
	}}}, nil
}

// subscribe checks the URI and makes sure the document's commits are
// watched: each one sends notifications/resources/updated to the
// subscribed sessions.
func (s *Server) subscribe(ctx context.Context, req *sdk.SubscribeRequest) error {
	key, err := keyOf(req.Params.URI)
	if err != nil {
		return err
	}
	ctx, r, err := s.reader(ctx)
	if err != nil {
		return protocolError(err)
	}
	doc, err := r.Doc(ctx, key)
	if err != nil {
		return protocolError(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.watching[key] || s.ctx.Err() != nil {
		return nil
	}
	s.watching[key] = true
	s.wg.Add(1)
	go s.watch(key, doc.Revision)
	return nil
}

// watch follows key's commits from revision from until the server closes,
// telling subscribers of each. A broken stream (a daemon restarting) is
// resumed after the last revision seen.
func (s *Server) watch(key string, from uint64) {
	defer s.wg.Done()
	uri := URIPrefix + key
	backoff := 100 * time.Millisecond
	for s.ctx.Err() == nil {
		ctx, r, err := s.reader(s.ctx)
		if err == nil {
			for c, werr := range r.Watch(ctx, key, from) {
				if werr != nil {
					err = werr
					break
				}
				backoff = 100 * time.Millisecond
				from = c.Rev
				_ = s.sdk.ResourceUpdated(s.ctx, &sdk.ResourceUpdatedNotificationParams{URI: uri})
			}
		}
		if s.ctx.Err() != nil {
			return
		}
		if err != nil && reason.CodeOf(err) != reason.NotFound {
			s.o.Logger.Warn("watch for subscribers broke; resuming", "key", key, "after", from, "error", err)
		}
		select {
		case <-s.ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

// describe says what a document is.
func describe(key string) string {
	switch key {
	case ".asdd/state/manifest.json":
		return "The ASDD manifest: slices, confidence chains, locks, tasks, escalations, agent heartbeats."
	case ".impl/manifest.json":
		return "The task manifest of the implementation plan (task-manifest.sh's)."
	case ".agents/tmp/state.json":
		return "The state-manager's state."
	}
	return "A dev cycle's state."
}
