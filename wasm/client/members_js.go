package client

// sortMembers sorts members by user id (see shellSortMembers).
func sortMembers(ms []Member) { shellSortMembers(ms) }
