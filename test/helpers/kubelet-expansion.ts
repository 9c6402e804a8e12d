/**
 * How the kubelet rewrites a container's command and args before it starts the process:
 * `$(NAME)` becomes the value of the container's env var NAME when it has one (left as written
 * otherwise), and `$$` becomes a literal `$`. From Kubernetes' third_party/forked/golang/
 * expansion/expand.go (Expand, tryReadVariableName), which the kubelet applies to command and
 * args (pkg/kubelet/kuberuntime/kuberuntime_container.go, ExpandContainerCommandAndArgs). Tests
 * that run a pod's script outside a pod pass it through this first, so a script that only works
 * unexpanded fails here too.
 */
export function kubeletExpand(input: string, env: Readonly<Record<string, string>>): string {
  let out = "";
  for (let i = 0; i < input.length; i++) {
    if (input[i] !== "$" || i + 1 >= input.length) {
      out += input[i];
      continue;
    }
    const next = input[i + 1]!;
    if (next === "$") {
      // An escaped operator: `$$` is one literal `$`.
      out += "$";
      i += 1;
    } else if (next === "(") {
      const close = input.indexOf(")", i + 2);
      if (close === -1) {
        // No closing paren: not a reference; written out as it stands.
        out += input.slice(i);
        break;
      }
      const name = input.slice(i + 2, close);
      out += Object.prototype.hasOwnProperty.call(env, name) ? env[name] : `$(${name})`;
      i = close;
    } else {
      // `$` before anything else stays, with what follows.
      out += "$" + next;
      i += 1;
    }
  }
  return out;
}
