#!/bin/sh
# Plots the CSV of an N sweep of 'ballcl bench' as time per step against N,
# log-log, one line per row, with the min..max of the repeats as error bars:
#
#   build/tools/ballcl bench -d cpu -n 1000,10000,100000,1000000 --csv bench.csv
#   tools/plot_bench.sh bench.csv bench.png ["title"]
#
# The output is PNG, or SVG when its name ends in .svg. Needs gnuplot
# (Debian: gnuplot-nox). Rows that failed validation have no time and are
# left out. The image is written next to its final name and renamed, so a
# failed plot never leaves half a file.
set -eu

die() {
    echo "$1" >&2
    exit 2
}
if [ $# -lt 2 ] || [ $# -gt 3 ]; then
    die "usage: tools/plot_bench.sh BENCH.csv OUT.png|OUT.svg [TITLE]"
fi
csv=$1
out=$2
title=${3:-"ballcl bench: time per step against N"}

command -v gnuplot >/dev/null 2>&1 ||
    die "plot_bench.sh: gnuplot not found (Debian: apt-get install gnuplot-nox)"
[ -r "$csv" ] || die "plot_bench.sh: cannot read '$csv'"
header=$(head -n 1 "$csv")
case "$header" in
balls,row,us_per_step_median,us_per_step_min,us_per_step_max,*) ;;
*) die "plot_bench.sh: '$csv' is not a 'ballcl bench --csv' file (header: $header)" ;;
esac
case "$out" in
*.svg) terminal="svg size 1000,650 dynamic background rgb 'white'" ;;
*) terminal="pngcairo size 1000,650" ;;
esac

outdir=$(dirname "$out")
part="$outdir/.$(basename "$out").part"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$part"' EXIT

# One data file per row (in table order): N, median, min, max.
rows=$(awk -F, 'NR > 1 && $9 == "yes" && !seen[$2]++ { print $2 }' "$csv")
[ -n "$rows" ] || die "plot_bench.sh: '$csv' has no validated row to plot"
plot=""
i=0
for r in $rows; do
    i=$((i + 1))
    awk -F, -v r="$r" 'NR > 1 && $2 == r && $9 == "yes" { print $1, $3, $4, $5 }' "$csv" |
        sort -n >"$tmp/row$i.dat"
    # Host rows dashed, the seed's mistakes warm, the right ways cool, fused bold.
    case "$r" in
    reference) style="lc rgb '#000000' dt 2 pt 6" ;;
    openmp) style="lc rgb '#777777' dt 2 pt 4" ;;
    local=1) style="lc rgb '#d62728' pt 9" ;;
    local=driver) style="lc rgb '#1f77b4' pt 11" ;;
    local=auto) style="lc rgb '#2ca02c' pt 5" ;;
    local=tuned) style="lc rgb '#17becf' pt 7" ;;
    sync-every-step) style="lc rgb '#ff7f0e' pt 13" ;;
    batched) style="lc rgb '#9467bd' pt 12" ;;
    fused) style="lc rgb '#000000' pt 7" ;;
    *) style="lc $i pt 1" ;;
    esac
    lw=2
    [ "$r" = fused ] && lw=3
    sep=${plot:+, }
    plot="$plot$sep'$tmp/row$i.dat' using 1:2:3:4 with yerrorlines lw $lw $style title '$r'"
done

gnuplot <<EOF
set terminal $terminal
set output '$part'
set title "$title"
set logscale xy
set format x "10^{%T}"
set xlabel "balls (N)"
set ylabel "time per step (us), median of repeats"
set grid xtics ytics mxtics mytics
set key outside right top
plot $plot
EOF
mv "$part" "$out"
echo "plot_bench.sh: wrote $out"
