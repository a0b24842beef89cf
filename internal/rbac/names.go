package rbac

// Resource is what a policy line's second field names: the kind of thing
// an API operation acts on, as Argo CD's RBAC model names it.
type Resource string

// The resources of Argo CD's RBAC model.
const (
	ResourceApplications      Resource = "applications"
	ResourceApplicationSets   Resource = "applicationsets"
	ResourceClusters          Resource = "clusters"
	ResourceProjects          Resource = "projects"
	ResourceRepositories      Resource = "repositories"
	ResourceWriteRepositories Resource = "write-repositories"
	ResourceAccounts          Resource = "accounts"
	ResourceCertificates      Resource = "certificates"
	ResourceGPGKeys           Resource = "gpgkeys"
	ResourceLogs              Resource = "logs"
	ResourceExec              Resource = "exec"
	ResourceExtensions        Resource = "extensions"
)

// Resources are all the resources of the model, in Argo CD's order.
var Resources = []Resource{ResourceApplications, ResourceApplicationSets, ResourceClusters, ResourceProjects,
	ResourceRepositories, ResourceWriteRepositories, ResourceAccounts, ResourceCertificates, ResourceGPGKeys,
	ResourceLogs, ResourceExec, ResourceExtensions}

// Known reports whether r is a resource of the model.
func (r Resource) Known() bool {
	for _, k := range Resources {
		if k == r {
			return true
		}
	}
	return false
}

// ProjectScoped reports whether r's objects start with their project
// ("<project>/<name>"): a project role reaches them only in its project.
func (r Resource) ProjectScoped() bool {
	switch r {
	case ResourceApplications, ResourceApplicationSets, ResourceLogs, ResourceExec:
		return true
	}
	return false
}

// Action is what a policy line's third field names.
type Action string

// The actions of Argo CD's RBAC model; ResourceAction makes the actions
// of resource actions.
const (
	ActionGet      Action = "get"
	ActionCreate   Action = "create"
	ActionUpdate   Action = "update"
	ActionDelete   Action = "delete"
	ActionSync     Action = "sync"
	ActionRollback Action = "rollback"
	ActionOverride Action = "override"
	ActionAction   Action = "action"
	ActionInvoke   Action = "invoke"
)

// ResourceAction is the action of running the resource action name on
// objects of group and kind: action/<group>/<kind>/<name>.
func ResourceAction(group, kind, name string) Action {
	return Action(string(ActionAction) + "/" + group + "/" + kind + "/" + name)
}

// On is action narrowed to one object of an application's, as Argo CD's
// fine-grained permissions name it: <action>/<group>/<kind>/<namespace>/<name>.
func (a Action) On(group, kind, namespace, name string) Action {
	return Action(string(a) + "/" + group + "/" + kind + "/" + namespace + "/" + name)
}
