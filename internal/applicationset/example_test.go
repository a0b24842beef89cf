package applicationset_test

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/applicationset"
)

// Desired renders one Application per parameter set, in the
// ApplicationSet's namespace and owned by it.
func ExampleDesired() {
	as := &v1alpha1.ApplicationSet{
		ObjectMeta: metav1.ObjectMeta{Name: "guestbook", Namespace: "argocd"},
		Spec: v1alpha1.ApplicationSetSpec{Template: v1alpha1.ApplicationSetTemplate{
			ApplicationSetTemplateMeta: v1alpha1.ApplicationSetTemplateMeta{Name: "{{cluster}}-guestbook"},
			Spec: v1alpha1.ApplicationSpec{Project: "default",
				Destination: v1alpha1.ApplicationDestination{Server: "{{url}}", Namespace: "guestbook"}},
		}},
	}
	apps, err := applicationset.Desired(as, []applicationset.Result{{
		Template: &as.Spec.Template,
		Params: []applicationset.Params{
			{"cluster": "staging", "url": "https://staging.example"},
			{"cluster": "prod", "url": "https://prod.example"},
		},
	}})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, app := range apps {
		fmt.Println(app.Namespace+"/"+app.Name, app.Spec.Destination.Server, app.Finalizers, app.OwnerReferences[0].Kind)
	}
	// Output:
	// argocd/staging-guestbook https://staging.example [resources-finalizer.argocd.argoproj.io] ApplicationSet
	// argocd/prod-guestbook https://prod.example [resources-finalizer.argocd.argoproj.io] ApplicationSet
}
