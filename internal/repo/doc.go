// Package repo is Capstan's repo server: it turns an Application's sources
// into the objects that should exist, with the resolved revision and source
// type of each source and the images the objects run.
//
// The controller and the API server use it through the Renderer interface:
// in-process inside `capstan run`, over gRPC when components run apart.
//
//	svc := repo.NewService(repo.Options{Root: dir})
//	resp, err := svc.Render(ctx, &repo.Request{
//		AppName:   "guestbook",
//		Namespace: "default",
//		Sources:   []v1alpha1.ApplicationSource{*app.Spec.Source},
//	})
package repo
