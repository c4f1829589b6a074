#!/bin/sh
# Runs a command with a Secret Service of its own: a private D-Bus session bus and an unlocked GNOME
# Keyring in a throwaway home, so keychain tests never touch a person's keys. Usage: with_keyring.sh CMD...
set -eu
home=$(mktemp -d)
trap 'rm -rf "$home"' EXIT
export HOME="$home" XDG_DATA_HOME="$home/.local/share" XDG_CONFIG_HOME="$home/.config" XDG_RUNTIME_DIR="$home/run"
mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
dbus-run-session -- sh -c 'printf kforge-test | gnome-keyring-daemon --unlock --components=secrets > /dev/null && "$@"' sh "$@"
