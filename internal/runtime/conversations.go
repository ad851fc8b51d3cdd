package runtime

import (
	"context"
	"errors"

	sa "github.com/superagents/superagents"
)

// An MCP client's host conversation (a Claude Code, Codex or OpenCode
// conversation, or the API token of an HTTP client whose conversation is
// not known) keeps one session, from which the tasks it launches hang,
// found again from any later connection of the conversation through a
// host link. That link is apart from the one an import of the same
// conversation makes (under the host's own name): it imports nothing and
// has no position, and records instead how far the conversation was
// given its tasks' notices (sa.HostLink.NoticesDelivered).

// conversationHost names, in host links, the session of a host's
// conversations.
func conversationHost(host string) string { return "mcp:" + host }

// Conversation returns the link of a host conversation (host is the
// host's name, hostSessionID its own id of the conversation) to its live
// session, or ErrNotFound when it has none.
func (ss Sessions) Conversation(ctx context.Context, host, hostSessionID string) (sa.HostLink, error) {
	return ss.rt.store.HostLink(ctx, conversationHost(host), hostSessionID)
}

// CreateForClient creates the session of an MCP client whose host
// conversation is not known, for the connection: it holds the client's
// tasks and their notices (agent sa.MCPClientAgent, origin MCP) and runs
// no turn, so no agent or model is checked.
func (ss Sessions) CreateForClient(ctx context.Context, title string) (sa.Session, error) {
	return ss.rt.store.CreateSession(ctx, clientSession(title))
}

func clientSession(title string) sa.NewSession {
	return sa.NewSession{Agent: sa.MCPClientAgent, Origin: sa.OriginMCP, Title: title}
}

// OpenConversation returns the link of a host conversation to its live
// session, made (as CreateClientSession makes one, titled title) when it
// has none. Connections of one conversation that open it at once get the
// same session.
func (ss Sessions) OpenConversation(ctx context.Context, host, hostSessionID, title string) (sa.HostLink, error) {
	link, err := ss.rt.Sessions().Conversation(ctx, host, hostSessionID)
	if !errors.Is(err, sa.ErrNotFound) {
		return link, err
	}
	_, link, err = ss.rt.store.CreateHostSession(ctx, clientSession(title), sa.HostLink{Host: conversationHost(host), HostSessionID: hostSessionID})
	if errors.Is(err, sa.ErrConflict) { // another connection made it meanwhile
		return ss.rt.Sessions().Conversation(ctx, host, hostSessionID)
	}
	return link, err
}

// DeliverNotices records that a host conversation (link, as Conversation
// or OpenConversation returned it) was given the notices of its session's
// messages up to the message upTo, so that its later connections are not
// given them again. The record never moves back: it returns the link as
// stored, which another connection may have moved further.
func (ss Sessions) DeliverNotices(ctx context.Context, link sa.HostLink, upTo int64) (sa.HostLink, error) {
	return ss.rt.store.MoveNotices(ctx, link.Host, link.HostSessionID, upTo)
}
