package cluster

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

// The objects cluster add creates on a cluster, with Argo CD's names.
const (
	ManagerNamespace      = "kube-system"
	ManagerServiceAccount = "argocd-manager"
	ManagerRole           = "argocd-manager-role"
	ManagerRoleBinding    = "argocd-manager-role-binding"
)

// ServiceAccount names the ServiceAccount Capstan manages a cluster as.
type ServiceAccount struct {
	Namespace, Name string
}

// Manager is Argo CD's argocd-manager in kube-system, which cluster add
// creates unless told to use another ServiceAccount.
var Manager = ServiceAccount{Namespace: ManagerNamespace, Name: ManagerServiceAccount}

func (sa ServiceAccount) String() string { return sa.Namespace + "/" + sa.Name }

// tokenWait bounds the wait for Kubernetes to fill in a token Secret.
const tokenWait = 30 * time.Second

// FromSecret reads a cluster Secret into a Cluster.
func FromSecret(s *corev1.Secret) (*Cluster, error) { return fromSecret(s) }

// InstallManager prepares a cluster to be managed, as argocd cluster add
// does: ServiceAccount argocd-manager in kube-system, bound to a role
// allowing everything (ClusterRole and ClusterRoleBinding, or a Role and
// RoleBinding in each of namespaces when given), and a long-lived token
// Secret. It returns the token; log hears of each object created.
// The ServiceAccount is account (Manager by default, or one in another
// namespace, as --system-namespace asks).
func InstallManager(ctx context.Context, cs kubernetes.Interface, account ServiceAccount, namespaces []string, log func(string)) (string, error) {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: account.Name, Namespace: account.Namespace}}
	if err := create(ctx, log, fmt.Sprintf("ServiceAccount %q", sa.Name), fmt.Sprintf(" in namespace %q", sa.Namespace), func() error {
		_, err := cs.CoreV1().ServiceAccounts(sa.Namespace).Create(ctx, sa, metav1.CreateOptions{})
		return err
	}); err != nil {
		return "", err
	}
	subject := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: account.Name, Namespace: account.Namespace}}
	if len(namespaces) == 0 {
		role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: ManagerRole}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}},
			{NonResourceURLs: []string{"*"}, Verbs: []string{"*"}},
		}}
		binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: ManagerRoleBinding}, Subjects: subject,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: ManagerRole}}
		if err := create(ctx, log, fmt.Sprintf("ClusterRole %q", role.Name), "", func() error {
			_, err := cs.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{})
			return err
		}); err != nil {
			return "", err
		}
		if err := create(ctx, log, fmt.Sprintf("ClusterRoleBinding %q", binding.Name), "", func() error {
			_, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{})
			return err
		}); err != nil {
			return "", err
		}
	}
	for _, ns := range namespaces {
		role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: ManagerRole, Namespace: ns}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}},
		}}
		binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: ManagerRoleBinding, Namespace: ns}, Subjects: subject,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: ManagerRole}}
		if err := create(ctx, log, fmt.Sprintf("Role %q", role.Name), fmt.Sprintf(" in namespace %q", ns), func() error {
			_, err := cs.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{})
			return err
		}); err != nil {
			return "", err
		}
		if err := create(ctx, log, fmt.Sprintf("RoleBinding %q", binding.Name), fmt.Sprintf(" in namespace %q", ns), func() error {
			_, err := cs.RbacV1().RoleBindings(ns).Create(ctx, binding, metav1.CreateOptions{})
			return err
		}); err != nil {
			return "", err
		}
	}
	return ServiceAccountToken(ctx, cs, account)
}

// ServiceAccountToken returns a long-lived token of an existing
// ServiceAccount: its token Secret's, or a new one's, as cluster add
// --service-account uses one.
func ServiceAccountToken(ctx context.Context, cs kubernetes.Interface, account ServiceAccount) (string, error) {
	if _, err := cs.CoreV1().ServiceAccounts(account.Namespace).Get(ctx, account.Name, metav1.GetOptions{}); err != nil {
		return "", fmt.Errorf("ServiceAccount %s: %w", account, err)
	}
	existing, err := managerTokens(ctx, cs, account)
	if err != nil {
		return "", err
	}
	for _, s := range existing {
		if len(s.Data[corev1.ServiceAccountTokenKey]) > 0 {
			return string(s.Data[corev1.ServiceAccountTokenKey]), nil
		}
	}
	token, _, err := newManagerToken(ctx, cs, account)
	return token, err
}

// RotateManagerToken issues a new argocd-manager token and deletes the
// old token Secrets, which revokes them.
func RotateManagerToken(ctx context.Context, cs kubernetes.Interface) (string, error) {
	account := Manager
	old, err := managerTokens(ctx, cs, account)
	if err != nil {
		return "", err
	}
	if _, err := cs.CoreV1().ServiceAccounts(account.Namespace).Get(ctx, account.Name, metav1.GetOptions{}); err != nil {
		return "", fmt.Errorf("ServiceAccount %s: %w (was the cluster added with cluster add?)", account, err)
	}
	token, name, err := newManagerToken(ctx, cs, account)
	if err != nil {
		return "", err
	}
	for _, s := range old {
		if s.Name == name {
			continue
		}
		if err := cs.CoreV1().Secrets(account.Namespace).Delete(ctx, s.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return "", fmt.Errorf("deleting the old token Secret/%s/%s: %w", account.Namespace, s.Name, err)
		}
	}
	return token, nil
}

// managerTokens lists the token Secrets of a ServiceAccount.
func managerTokens(ctx context.Context, cs kubernetes.Interface, account ServiceAccount) ([]corev1.Secret, error) {
	list, err := cs.CoreV1().Secrets(account.Namespace).List(ctx, metav1.ListOptions{FieldSelector: "type=" + string(corev1.SecretTypeServiceAccountToken)})
	if err != nil {
		return nil, fmt.Errorf("listing token Secrets in %s: %w", account.Namespace, err)
	}
	var out []corev1.Secret
	for _, s := range list.Items {
		if s.Annotations[corev1.ServiceAccountNameKey] == account.Name {
			out = append(out, s)
		}
	}
	return out, nil
}

// newManagerToken creates a long-lived token Secret for a ServiceAccount
// and waits for Kubernetes to fill it in.
func newManagerToken(ctx context.Context, cs kubernetes.Interface, account ServiceAccount) (string, string, error) {
	sec := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{GenerateName: account.Name + "-token-", Namespace: account.Namespace,
			Annotations: map[string]string{corev1.ServiceAccountNameKey: account.Name}},
		Type: corev1.SecretTypeServiceAccountToken,
	}
	created, err := cs.CoreV1().Secrets(account.Namespace).Create(ctx, sec, metav1.CreateOptions{})
	if err != nil {
		return "", "", fmt.Errorf("creating a token Secret for %s: %w", account, err)
	}
	var token string
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, tokenWait, true, func(ctx context.Context) (bool, error) {
		got, err := cs.CoreV1().Secrets(account.Namespace).Get(ctx, created.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		token = string(got.Data[corev1.ServiceAccountTokenKey])
		return token != "", nil
	})
	if err != nil {
		return "", "", fmt.Errorf("waiting for the token of Secret/%s/%s: %w", account.Namespace, created.Name, err)
	}
	return token, created.Name, nil
}

// create runs a create call, treating "already exists" as done, and logs
// what it created.
func create(ctx context.Context, log func(string), what, where string, call func() error) error {
	err := call()
	switch {
	case err == nil:
		log(what + " created" + where)
	case apierrors.IsAlreadyExists(err):
		log(what + " already exists" + where)
	default:
		return fmt.Errorf("creating %s%s: %w", what, where, err)
	}
	return ctx.Err()
}
