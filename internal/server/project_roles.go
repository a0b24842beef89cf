package server

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/apiwire"
	"github.com/capstan-cd/capstan/internal/rbac"
	"github.com/capstan-cd/capstan/internal/session"
)

// projectSubjectPrefix starts the subject of a project role: proj:<project>:<role>.
const projectSubjectPrefix = "proj:"

var roleNamePattern = regexp.MustCompile(`^[a-zA-Z0-9]([-_a-zA-Z0-9]*[a-zA-Z0-9])?$`)

// validateRoles checks a project's roles as Argo CD does: valid names, and
// policies whose subject is the role itself and whose object lies in the
// project, and groups that are one name each, so a project role can never
// reach beyond its project.
func validateRoles(p *v1alpha1.AppProject) error {
	seen := map[string]bool{}
	for _, role := range p.Spec.Roles {
		if !roleNamePattern.MatchString(role.Name) {
			return fmt.Errorf("project %s: role name %q is invalid", p.Name, role.Name)
		}
		if seen[role.Name] {
			return fmt.Errorf("project %s: role %s is defined twice", p.Name, role.Name)
		}
		seen[role.Name] = true
		for _, line := range role.Policies {
			if err := checkRolePolicy(p.Name, role.Name, line); err != nil {
				return err
			}
		}
		for _, g := range role.Groups {
			if err := checkRoleGroup(p.Name, role.Name, g); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkRolePolicy checks one policy line of a project role.
func checkRolePolicy(project, role, line string) error {
	subject := projectSubjectPrefix + project + ":" + role
	if strings.ContainsAny(line, "\r\n") {
		return fmt.Errorf("project %s role %s: policy %q contains a line break", project, role, line)
	}
	f := strings.Split(line, ",")
	for i := range f {
		f[i] = strings.TrimSpace(f[i])
	}
	switch {
	case len(f) != 6 || f[0] != "p":
		return fmt.Errorf("project %s role %s: policy %q is not \"p, %s, <resource>, <action>, <object>, allow|deny\"", project, role, line, subject)
	case f[1] != subject:
		return fmt.Errorf("project %s role %s: policy subject must be %q, not %q", project, role, subject, f[1])
	case !strings.HasPrefix(f[4], project+"/"):
		return fmt.Errorf("project %s role %s: policy object must be of the form '%s/*', '%s/<APPNAME>' or '%s/<NAMESPACE>/<APPNAME>', not %q", project, role, project, project, project, f[4])
	case f[5] != "allow" && f[5] != "deny":
		return fmt.Errorf("project %s role %s: policy effect must be allow or deny, not %q", project, role, f[5])
	}
	return nil
}

// checkRoleGroup checks one SSO group of a project role: a single name,
// which a policy line cannot be made of.
func checkRoleGroup(project, role, group string) error {
	switch {
	case strings.TrimSpace(group) == "":
		return fmt.Errorf("project %s role %s: a group name is empty", project, role)
	case strings.ContainsAny(group, "\r\n"):
		return fmt.Errorf("project %s role %s: group %q contains a line break", project, role, group)
	case strings.ContainsAny(group, ",\""):
		return fmt.Errorf("project %s role %s: group %q contains a comma or a quote", project, role, group)
	}
	return nil
}

// projectPolicy is the casbin policy a project's roles add for a token of
// that project: their policies and their SSO groups. Lines that do not
// pass the roles' checks (a project written around the API) are left out.
func projectPolicy(p *v1alpha1.AppProject) string {
	var lines []string
	for _, role := range p.Spec.Roles {
		if !roleNamePattern.MatchString(role.Name) {
			continue
		}
		for _, line := range role.Policies {
			if checkRolePolicy(p.Name, role.Name, line) == nil {
				lines = append(lines, line)
			}
		}
		for _, g := range role.Groups {
			if checkRoleGroup(p.Name, role.Name, g) == nil {
				lines = append(lines, fmt.Sprintf("g, %s, %s%s:%s", strings.TrimSpace(g), projectSubjectPrefix, p.Name, role.Name))
			}
		}
	}
	return strings.Join(lines, "\n")
}

// authenticateProjectToken accepts a project role token while its role
// exists and still lists the token's id (or, for tokens without one, its
// issue time).
func (s *Server) authenticateProjectToken(ctx context.Context, claims *session.Claims) (*v1alpha1.AppProject, error) {
	rest := strings.TrimPrefix(claims.Subject, projectSubjectPrefix)
	projName, roleName, ok := strings.Cut(rest, ":")
	if !ok {
		return nil, fmt.Errorf("token subject %q is not proj:<project>:<role>", claims.Subject)
	}
	p := &v1alpha1.AppProject{}
	if err := s.opts.Client.Get(ctx, client.ObjectKey{Namespace: s.opts.Namespace, Name: projName}, p); err != nil {
		return nil, fmt.Errorf("project %s of the token: %w", projName, err)
	}
	for _, role := range p.Spec.Roles {
		if role.Name != roleName {
			continue
		}
		for _, t := range role.JWTTokens {
			if (claims.ID != "" && t.ID == claims.ID) || (claims.ID == "" && claims.IssuedAt != nil && t.IssuedAt == claims.IssuedAt.Unix()) {
				return p, nil
			}
		}
		return nil, fmt.Errorf("token %s of role %s in project %s has been revoked", claims.ID, roleName, projName)
	}
	return nil, fmt.Errorf("role %s does not exist in project %s", roleName, projName)
}

// updateProject answers PUT /api/v1/projects/{name} with {"project": {...}}.
func (s *Server) updateProject(r *http.Request, c *caller) (any, error) {
	var req struct {
		Project v1alpha1.AppProject `json:"project"`
	}
	if err := decode(r, &req, "project", false); err != nil {
		return nil, err
	}
	name := r.PathValue("name")
	if !c.can(rbac.ResourceProjects, rbac.ActionUpdate, name) {
		return nil, c.forbidden(rbac.ResourceProjects, rbac.ActionUpdate, name)
	}
	req.Project.Name = name
	if err := validateRoles(&req.Project); err != nil {
		return nil, badRequest(err.Error())
	}
	p := &v1alpha1.AppProject{}
	if err := s.opts.Client.Get(r.Context(), client.ObjectKey{Namespace: s.opts.Namespace, Name: name}, p); err != nil {
		return nil, fmt.Errorf("project %s: %w", name, err)
	}
	if req.Project.ResourceVersion != "" {
		p.ResourceVersion = req.Project.ResourceVersion // optimistic lock, when the caller sends one
	}
	p.Spec, p.Labels, p.Annotations = req.Project.Spec, req.Project.Labels, req.Project.Annotations
	if err := s.opts.Client.Update(r.Context(), p); err != nil {
		return nil, fmt.Errorf("updating project %s: %w", name, err)
	}
	s.audit(r.Context(), c, p, reasonUpdated, "updated project")
	return p, nil
}

// createRoleToken answers POST /api/v1/projects/{name}/roles/{role}/token:
// a JWT for the role, recorded in the role so it can be revoked.
func (s *Server) createRoleToken(r *http.Request, c *caller) (any, error) {
	var req struct {
		ExpiresIn jsonInt `json:"expiresIn"` // seconds; 0: never
		ID        string  `json:"id"`
	}
	if err := decode(r, &req, "token request", true); err != nil {
		return nil, err
	}
	name, roleName := r.PathValue("name"), r.PathValue("role")
	if !c.can(rbac.ResourceProjects, rbac.ActionUpdate, name) {
		return nil, c.forbidden(rbac.ResourceProjects, rbac.ActionUpdate, name)
	}
	if req.ID == "" {
		req.ID = newID()
	}
	now := time.Now()
	tok := v1alpha1.JWTToken{IssuedAt: now.Unix(), ID: req.ID}
	if req.ExpiresIn > 0 {
		tok.ExpiresAt = now.Add(time.Duration(req.ExpiresIn) * time.Second).Unix()
	}
	err := s.editRole(r.Context(), name, roleName, func(role *v1alpha1.ProjectRole) error {
		if slices.ContainsFunc(role.JWTTokens, func(t v1alpha1.JWTToken) bool { return t.ID == req.ID }) {
			return fmt.Errorf("role %s already has a token with id %s", roleName, req.ID)
		}
		role.JWTTokens = append(role.JWTTokens, tok)
		return nil
	})
	if err != nil {
		return nil, err
	}
	signed, err := s.sessions.Create(projectSubjectPrefix+name+":"+roleName, time.Duration(req.ExpiresIn)*time.Second, req.ID)
	if err != nil {
		return nil, err
	}
	return apiwire.SessionToken{Token: signed}, nil
}

// deleteRoleToken answers DELETE /api/v1/projects/{name}/roles/{role}/token/{iat}
// (?id= picks the token by id), revoking it.
func (s *Server) deleteRoleToken(r *http.Request, c *caller) (any, error) {
	name, roleName := r.PathValue("name"), r.PathValue("role")
	if !c.can(rbac.ResourceProjects, rbac.ActionUpdate, name) {
		return nil, c.forbidden(rbac.ResourceProjects, rbac.ActionUpdate, name)
	}
	id := r.URL.Query().Get("id")
	iat, _ := strconv.ParseInt(r.PathValue("iat"), 10, 64)
	err := s.editRole(r.Context(), name, roleName, func(role *v1alpha1.ProjectRole) error {
		role.JWTTokens = slices.DeleteFunc(role.JWTTokens, func(t v1alpha1.JWTToken) bool {
			return (id != "" && t.ID == id) || (id == "" && t.IssuedAt == iat)
		})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return map[string]string{}, nil
}

// editRole changes one role of a project, retrying on conflicts.
func (s *Server) editRole(ctx context.Context, project, roleName string, edit func(*v1alpha1.ProjectRole) error) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p := &v1alpha1.AppProject{}
		if err := s.opts.Client.Get(ctx, client.ObjectKey{Namespace: s.opts.Namespace, Name: project}, p); err != nil {
			return fmt.Errorf("project %s: %w", project, err)
		}
		i := slices.IndexFunc(p.Spec.Roles, func(r v1alpha1.ProjectRole) bool { return r.Name == roleName })
		if i < 0 {
			return notFound(fmt.Sprintf("role %s does not exist in project %s", roleName, project))
		}
		if err := edit(&p.Spec.Roles[i]); err != nil {
			return badRequest(err.Error())
		}
		return s.opts.Client.Update(ctx, p)
	})
}
