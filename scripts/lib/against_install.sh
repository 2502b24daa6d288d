# Sourced by scripts/sdk_example.sh and scripts/embed_example.sh (which define fail(), $build,
# $work and $prefix): installing a build folder into $prefix and building an example project
# against it, each step's log printed only when it fails.

# install_build FILE...: `cmake --install $build --prefix $prefix`, then each FILE (relative to
# the prefix) must exist.
install_build() {
  echo "-- installing $build into $prefix"
  cmake --install "$build" --prefix "$prefix" >"$work/install.log" || { cat "$work/install.log" >&2; fail "cmake --install $build"; }
  local f
  for f in "$@"; do
    [[ -e "$prefix/$f" ]] || fail "cmake --install did not install $f"
  done
}

# build_example SOURCE_DIR BUILD_DIR [CMAKE_ARG...]: configures (Ninja when there is one) and
# builds the project at SOURCE_DIR with CMAKE_PREFIX_PATH=$prefix and the extra arguments.
build_example() {
  local src="$1" dir="$2"
  shift 2
  echo "-- building ${src#"$root/"}${*:+ ($*)}"
  local generator=()
  command -v ninja >/dev/null && generator=(-G Ninja)
  cmake -S "$src" -B "$dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_PREFIX_PATH="$prefix" "$@" \
        >"$work/configure.log" 2>&1 || { cat "$work/configure.log" >&2; fail "configuring $src"; }
  cmake --build "$dir" --parallel "$(nproc)" >"$work/build.log" 2>&1 || { cat "$work/build.log" >&2; fail "building $src"; }
}
