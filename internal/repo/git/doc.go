// Package git fetches Git repositories for rendering, with the git command
// line client (what Argo CD uses, and the fastest on large repositories).
//
// A Store keeps one bare clone per repository URL, shared by every caller.
// Resolving a revision costs one `git ls-remote`, shared by concurrent
// callers and remembered briefly, so an unchanged repository is never
// fetched again. Each resolved commit is extracted once into its own
// read-only directory, so renders of different revisions never interfere:
//
//	store := git.NewStore(git.Options{Root: dir})
//	repo := store.Repo("https://git.example.com/app.git", git.Creds{Username: "u", Password: "p"})
//	sha, err := repo.Resolve(ctx, "main")
//	tree, err := repo.Checkout(ctx, sha) // a directory holding the commit's files
package git
