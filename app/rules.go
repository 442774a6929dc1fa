package app

import (
	"github.com/custodian-dev/custodian/agentstate"
	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/cycle"
	"github.com/custodian-dev/custodian/impl"
	"github.com/custodian-dev/custodian/store"
)

// DocumentRules are the domains' checks of a generic write (a rollback, a
// human's raw write) of each of the custodian's documents.
var DocumentRules = store.Rules{
	{Pattern: asdd.Key, Check: asdd.ValidateWrite},
	{Pattern: impl.Key, Check: impl.ValidateWrite},
	{Pattern: agentstate.Key, Check: agentstate.ValidateWrite},
	{Pattern: cycle.Dir + "/*.json", Check: cycle.ValidateWrite},
}
