# The seed's sample policy, in its own (Rego v0) syntax: run the engine with --v0-compatible.
# policy.v1.rego is the same policy in Rego v1, the default syntax.
package httpapi.authz

import input

default allow = false

# Everyone may read their own salary.
allow {
  input.method = "GET"
  input.path = ["salary", user]
  input.user = user
}

# Managers may read the salaries of the people who report to them.
allow {
  input.method = "GET"
  input.path = ["salary", user]
  data.reports[input.user][_] = user
}
