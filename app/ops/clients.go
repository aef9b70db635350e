package ops

// `ownsona clients list|revoke|revoke-all|delete|prune`: the OAuth clients that registered, and
// their grants.

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ownsona/ownsona/app/adminsock"
	"github.com/ownsona/ownsona/oauth/grant"
)

func clientsCmd(ctx context.Context, env *Env, args []string) error {
	return dispatch(ctx, env, "clients", []subcommand{
		{"list", "clients list", "Lists the OAuth clients: id, name, when each registered, was authorized and was last used.", clientsList},
		{"revoke", "clients revoke CLIENT_ID", "Ends a client's access at once: its grants are revoked and it must ask the owner again.", clientsRevoke},
		{"revoke-all", "clients revoke-all", "Ends every client's access at once.", clientsRevokeAll},
		{"delete", "clients delete CLIENT_ID", "Removes a client and revokes its grants.", clientsDelete},
		{"prune", "clients prune", "Removes clients never authorized within 15 minutes of registering, or unused for 90 days, now.", clientsPrune},
	}, args)
}

// clientsOp parses the flags of `clients SUB` (with want operands, named by operand in the
// usage), forwards it to a running server or opens the file, and runs op on the grants.
func clientsOp(ctx context.Context, env *Env, sub, operand, about string, args []string, op func(g *grant.Store, operands []string) error) error {
	form := "clients " + sub
	if operand != "" {
		form += " " + operand
	}
	fs := newFlags("clients "+sub, form+" [--db PATH]", about)
	db := dbFlags(fs, env)
	operands, err := parse(env, fs, args)
	if err != nil {
		return err
	}
	switch {
	case operand == "":
		if err := noOperands(fs, operands); err != nil {
			return err
		}
	case len(operands) != 1:
		return Usagef("clients %s: name one %s (see 'ownsona clients list')", sub, operand)
	}
	if handled, err := env.forward(ctx, *db, adminsock.Call{Args: append([]string{"clients", sub}, args...)}, nil); handled {
		return err
	}
	if env.Live != nil && env.Live.Grants != nil { // the server's own: a revocation is live at once
		return op(env.Live.Grants, operands)
	}
	kdb, _, done, err := env.openDB(*db, false)
	if err != nil {
		return err
	}
	defer done()
	g, err := grant.Open(kdb, grant.Config{Now: env.Now})
	if err != nil {
		return err
	}
	if err := op(g, operands); err != nil {
		return err
	}
	return done()
}

func clientsList(ctx context.Context, env *Env, args []string) error {
	return clientsOp(ctx, env, "list", "", "Lists the OAuth clients: id, name, when each registered, was authorized and was last used, and its redirect URIs.", args,
		func(g *grant.Store, _ []string) error {
			cs, err := g.Clients()
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(env.Stdout, 2, 8, 2, ' ', 0)
			fmt.Fprintln(tw, "CLIENT ID\tNAME\tREGISTERED\tAUTHORIZED\tLAST USED\tREDIRECT URIS")
			for _, c := range cs {
				fmt.Fprintf(tw, "%s\t%q\t%s\t%s\t%s\t%s\n", c.ID, c.Name, c.CreatedAt.UTC().Format(time.DateTime),
					timeOr(c.AuthorizedAt, "never"), c.LastUsedAt.UTC().Format(time.DateTime), strings.Join(c.RedirectURIs, " "))
			}
			return tw.Flush()
		})
}

func clientsRevoke(ctx context.Context, env *Env, args []string) error {
	return clientsOp(ctx, env, "revoke", "CLIENT_ID", "Ends a client's access at once: its grants and tokens are revoked, and it must ask the owner again.", args,
		func(g *grant.Store, operands []string) error {
			n, err := g.RevokeClient(operands[0])
			if err != nil {
				return Usagef("clients revoke: %v", err)
			}
			fmt.Fprintf(env.Stdout, "revoked %s of %s; it must ask the owner again\n", plural(n, "grant", "grants"), operands[0])
			return nil
		})
}

func clientsRevokeAll(ctx context.Context, env *Env, args []string) error {
	return clientsOp(ctx, env, "revoke-all", "", "Ends every client's access at once: every grant is revoked, and each client must ask the owner again.", args,
		func(g *grant.Store, _ []string) error {
			n, err := g.RevokeAll()
			if err != nil {
				return err
			}
			fmt.Fprintf(env.Stdout, "revoked %s; every client must ask the owner again\n", plural(n, "grant", "grants"))
			return nil
		})
}

func clientsDelete(ctx context.Context, env *Env, args []string) error {
	return clientsOp(ctx, env, "delete", "CLIENT_ID", "Removes a client's registration and revokes its grants.", args,
		func(g *grant.Store, operands []string) error {
			if err := g.DeleteClient(operands[0]); err != nil {
				return Usagef("clients delete: %v", err)
			}
			fmt.Fprintf(env.Stdout, "deleted %s and revoked its grants\n", operands[0])
			return nil
		})
}

func clientsPrune(ctx context.Context, env *Env, args []string) error {
	return clientsOp(ctx, env, "prune", "", "Removes, now rather than at the next hourly collection, the clients never authorized within 15 minutes of registering and those unused for 90 days (revoking their grants), with expired codes and dead refresh-token families.", args,
		func(g *grant.Store, _ []string) error {
			now := time.Now
			if env.Now != nil {
				now = env.Now
			}
			st, err := g.GC(now())
			if err != nil {
				return err
			}
			fmt.Fprintf(env.Stdout, "removed %s, %s and %s\n", plural(st.Clients, "client", "clients"),
				plural(st.Codes, "expired code", "expired codes"), plural(st.Grants, "dead grant", "dead grants"))
			return nil
		})
}
