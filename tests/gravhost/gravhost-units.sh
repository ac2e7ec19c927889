#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# gravhost-units — the units a snapshot carries: by default N-body units
# (G = 1, every dataset's powers of length, mass and time, no factor to cgs);
# with units = { ... } in the config (two of length, mass, time; the third
# from G = 1) the SWIFT and Gadget-4 unit attributes with their cgs factors,
# so pynbody, yt and swiftsimio read physical units. Needs h5py.
NAME=gravhost-units
. '@TESTLIB@'
if ! python3 -c "import h5py" 2>/dev/null; then echo "1..0 # SKIP h5py is not installed"; exit 0; fi
echo "1..7"

BASE='solver = { plugin = "cpu-direct"; params = { eps = 0.05; }; };
initial_conditions = { model = "plummer"; n = 64; seed = 1; };
run = { t_end = 0.125; };'
# run NAME UNITS: a run with the units group UNITS ("" for none)
run() { printf '%s\n%s\n' "$BASE" "$2" > "$TMP/$1.cfg"; "$GRAVHOST" run "$TMP/$1.cfg" --output "$TMP/$1" 2>"$TMP/$1.err"; }
# check DIR PYTHON: PYTHON (a boolean expression over f, the last snapshot,
# and G, the CODATA G in cgs) printed as "yes"
check() {
    python3 - "$1" "$2" <<'PY'
import sys, glob, h5py, numpy as np
f = h5py.File(sorted(glob.glob(sys.argv[1] + "/snap_*.h5"))[-1], "r")
G = 6.67430e-8
a = lambda d, k: float(np.ravel(f["PartType1/" + d].attrs[k])[0])
try:
    print("yes" if eval("(" + sys.argv[2] + ")") else "no")
except Exception as e:
    print("error: %s" % e)
PY
}

run nbody ''
r=$(check "$TMP/nbody" '"N-body" in f["Units"].attrs["System"].decode() and "Parameters" not in f
    and a("Velocities", "U_L exponent") == 1 and a("Velocities", "U_t exponent") == -1
    and a("Masses", "U_M exponent") == 1 and a("Velocities", "velocity_scaling") == 1
    and "to_cgs" not in f["PartType1/Coordinates"].attrs')
[ "$r" = yes ]; ok $? "N-body units by default: every dataset's dimensions, no factor to cgs ($r)"

run kpc 'units = { length = "1 kpc"; mass = "1e10 Msun"; };'
ok $? "units = { length = \"1 kpc\"; mass = \"1e10 Msun\" } runs"
r=$(check "$TMP/kpc" 'abs(a("Coordinates", "to_cgs") / 3.0856775814913673e21 - 1) < 1e-12
    and abs(a("Masses", "Conversion factor to CGS (not including cosmological corrections)") / 1.98841e43 - 1) < 1e-12
    and abs(a("Velocities", "to_cgs") / np.sqrt(G * 1.98841e43 / 3.0856775814913673e21) - 1) < 1e-12
    and abs(f["Parameters"].attrs["UnitVelocity_in_cm_per_s"] / 1e5 - 207.4) < 0.1
    and abs(float(np.ravel(f["Units"].attrs["Unit time in cgs (U_t)"])[0]) / 3.15576e13 - 4.71) < 0.01')
[ "$r" = yes ]; ok $? "kpc and 1e10 Msun: positions to cm, masses to g, velocities in units of 207.4 km/s, time 4.71 Myr ($r)"

run pcmyr 'units = { length = "pc"; time = "1 Myr"; };'
r=$(check "$TMP/pcmyr" 'abs(a("Masses", "to_cgs") / (3.0856775814913673e18**3 / (G * 3.15576e13**2)) - 1) < 1e-12')
[ "$r" = yes ]; ok $? "pc and Myr: the mass unit follows from G = 1 ($r)"

printf '%s\nunits = { length = "pc"; mass = "Msun"; time = "Myr"; };\n' "$BASE" > "$TMP/three.cfg"
expect_error three "units: give two of length, mass and time (3 given): the third follows from G = 1"
printf '%s\nunits = { length = "1 parsec"; mass = "Msun"; };\n' "$BASE" > "$TMP/badname.cfg"
expect_error badname 'units.length: expected a quantity such as "1 kpc" (cm, m, km, au, pc, kpc, Mpc)'

# pynbody, where it is installed: the time and the positions in kpc
if python3 -c "import pynbody" 2>/dev/null; then
    r=$(python3 - "$TMP/kpc" <<'PY' 2>&1 | tail -1
import sys, glob, warnings, numpy as np, pynbody, h5py
path = sorted(glob.glob(sys.argv[1] + "/snap_*.h5"))[-1]
t_code = float(h5py.File(path, "r")["Header"].attrs["Time"])
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    s = pynbody.load(path)
    t = float(s.properties["time"].in_units("Myr"))
    x = s["pos"].in_units("kpc")
    raw = np.asarray(s["pos"])
nounits = [str(m.message) for m in w if "unit" in str(m.message).lower()]
print("yes" if t_code == 0.125 and abs(t / (t_code * 4.7148) - 1) < 1e-3 and np.allclose(x, raw) and not nounits else "no: t = %g Myr %s" % (t, nounits))
PY
)
    [ "$r" = yes ]; ok $? "pynbody reads the time (0.589 Myr) and kpc positions without a unit warning ($r)"
else
    ok 0 "# SKIP pynbody is not installed"
fi
exit $fail
