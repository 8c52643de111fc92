// gnuplot, in one place: quoting text and numbers into a script, the PNG terminal preamble every picture
// uses, and running a script into a PNG that replaces the old one only when the new one is whole. PlotCurves
// (plots.h) and RenderFigure (figure_render.h) draw through it.
//
//   std::string script = absl::StrCat(PngPreamble("fig.png", 640, 480, true), "set title ", GpQuote(t));
//   RETURN_IF_ERROR(RunGnuplotToPng("gnuplot", "fig.gp", dir, dir + "/fig.png", "figure 'fig.png'"));
#ifndef MIMETIC_EXPERIMENTS_RENDER_GNUPLOT_H_
#define MIMETIC_EXPERIMENTS_RENDER_GNUPLOT_H_

#include <string>

#include "absl/status/status.h"

namespace mimetic::experiments {

// A gnuplot single-quoted string: inside one, '' stands for ' and nothing else is special; line breaks become
// spaces (a script line cannot hold one).
std::string GpQuote(const std::string& text);
// A number as gnuplot reads it back exactly (%.17g), or NaN (the scripts' `datafile missing`).
std::string GpNumber(double v);
// The script's first lines: `outfile` defaults to `png_name` (RunGnuplotToPng sets it to a temporary),
// pngcairo when this gnuplot has it, else the png terminal (truecolor when asked), text drawn literally
// (noenhanced: "seed_1" keeps its underscore), and `set output outfile`.
std::string PngPreamble(const std::string& png_name, int width, int height, bool truecolor);

// Whether `program` is an executable file on PATH (tests use it to skip without gnuplot).
bool ProgramOnPath(const std::string& program);

// OK when `path` is a whole PNG: it starts with the PNG signature and ends with the IEND chunk (its last 12
// bytes are 00 00 00 00 'IEND' AE 42 60 82). A PNG cut short (gnuplot exits 0 after a full disk) is
// DataLoss naming the path; a missing file is the open's error.
absl::Status CheckPngComplete(const std::string& path);

// Runs `gnuplot` on the script `script_name` in the directory `dir` with `outfile` set to a temporary beside
// `png_path` (which must lie in `dir`), checks that the drawn image is whole (CheckPngComplete), fsyncs it
// and renames it over `png_path`, so that a failed plot leaves an earlier PNG intact. Errors start with
// `where`: FailedPrecondition when gnuplot is not installed; Internal with its exit status and output when
// it fails or draws nothing (an empty or missing file); DataLoss when the image is cut short.
absl::Status RunGnuplotToPng(const std::string& gnuplot, const std::string& script_name,
                             const std::string& dir, const std::string& png_path, const std::string& where);

}  // namespace mimetic::experiments

#endif  // MIMETIC_EXPERIMENTS_RENDER_GNUPLOT_H_
