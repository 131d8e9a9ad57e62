# Sourced by bootstrap.sh and hardening.sh: install_missing PACKAGE... installs the Debian packages
# that are not installed yet (with sudo when not root), in one apt-get call.
install_missing() {
  local missing=() p sudo=""
  for p in "$@"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
      missing+=("$p")
    fi
  done
  if ((${#missing[@]} == 0)); then return 0; fi
  echo "collsim: installing missing Debian packages: ${missing[*]}" >&2
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
}
