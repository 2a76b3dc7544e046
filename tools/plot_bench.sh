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

usage() {
    echo "usage: tools/plot_bench.sh BENCH.csv OUT.png|OUT.svg [TITLE]" >&2
    exit 2
}
[ $# -ge 2 ] && [ $# -le 3 ] || usage
csv=$1
out=$2
title=${3:-"ballcl bench: time per step against N"}

if ! command -v gnuplot >/dev/null 2>&1; then
    echo "plot_bench.sh: gnuplot not found (Debian: apt-get install gnuplot-nox)" >&2
    exit 2
fi
if [ ! -r "$csv" ]; then
    echo "plot_bench.sh: cannot read '$csv'" >&2
    exit 2
fi
header=$(head -n 1 "$csv")
case "$header" in
balls,row,us_per_step_median,us_per_step_min,us_per_step_max,*) ;;
*)
    echo "plot_bench.sh: '$csv' is not a 'ballcl bench --csv' file (header: $header)" >&2
    exit 2
    ;;
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
if [ -z "$rows" ]; then
    echo "plot_bench.sh: '$csv' has no validated row to plot" >&2
    exit 2
fi
plot=""
i=0
for r in $rows; do
    i=$((i + 1))
    awk -F, -v r="$r" 'NR > 1 && $2 == r && $9 == "yes" { print $1, $3, $4, $5 }' "$csv" |
        sort -n >"$tmp/row$i.dat"
    sep=${plot:+, }
    plot="$plot$sep'$tmp/row$i.dat' using 1:2:3:4 with yerrorlines linestyle $i title '$r'"
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
set style line 1 lc rgb '#1b9e77' lw 2 pt 7
set style line 2 lc rgb '#d95f02' lw 2 pt 5
set style line 3 lc rgb '#e7298a' lw 2 pt 9
set style line 4 lc rgb '#7570b3' lw 2 pt 11
set style line 5 lc rgb '#66a61e' lw 2 pt 13
set style line 6 lc rgb '#e6ab02' lw 2 pt 7
set style line 7 lc rgb '#a6761d' lw 2 pt 5
set style line 8 lc rgb '#666666' lw 2 pt 9
set style line 9 lc rgb '#000000' lw 2 pt 11
plot $plot
EOF
mv "$part" "$out"
echo "plot_bench.sh: wrote $out"
