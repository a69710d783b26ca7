# The seed's sample policy in Rego v1 (the engine's default syntax).
package httpapi.authz

default allow := false

# Everyone may read their own salary.
allow if {
  input.method == "GET"
  input.path == ["salary", input.user]
}

# Managers may read the salaries of the people who report to them.
allow if {
  input.method == "GET"
  some user in data.reports[input.user]
  input.path == ["salary", user]
}
