package pullrequest

// Auth is how a provider is logged in to: a user name and password (or
// app password), or a bearer token; all empty: anonymous. A bearer token,
// when set, is used rather than the user name and password.
type Auth struct {
	Username, Password, BearerToken string
}

// basic reports whether Auth logs in with a user name and password.
func (a Auth) basic() bool { return a.BearerToken == "" && a.Username != "" }
