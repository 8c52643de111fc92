// Every registered figure has a complete folder (figures/<id>/: its code, its three presets and a README),
// and every folder under figures/ is registered: adding a figure is the folder, one FIGURES entry in BUILD
// and one registry row, and this test names whichever is missing.
#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>

#include "gtest/gtest.h"
#include "mimetic/experiments/figures/figure.h"

namespace mimetic::experiments {
namespace {

namespace fs = std::filesystem;

fs::path FiguresDir() { return fs::path(std::getenv("TEST_SRCDIR")) / "mimetic/mimetic/experiments/figures"; }

TEST(FigureFoldersTest, EveryFigureHasItsCodePresetsAndReadme) {
  ASSERT_TRUE(fs::is_directory(FiguresDir())) << FiguresDir();
  for (const FigureDef& f : Figures()) {
    const fs::path dir = FiguresDir() / f.id;
    for (const std::string& file :
         {f.id + ".cc", std::string("cpu.textproto"), std::string("paper.textproto"),
          std::string("smoke.textproto"), std::string("README.md")}) {
      EXPECT_TRUE(fs::is_regular_file(dir / file))
          << "figure " << f.id << " lacks " << (dir / file).lexically_relative(FiguresDir().parent_path())
          << " (a figure's folder holds <id>.cc, cpu/paper/smoke presets and "
             "README.md; a gpu preset is optional)";
    }
  }
}

TEST(FigureFoldersTest, EveryFolderIsARegisteredFigure) {
  std::set<std::string> ids;
  for (const FigureDef& f : Figures()) ids.insert(f.id);
  for (const fs::directory_entry& e : fs::directory_iterator(FiguresDir())) {
    if (!e.is_directory()) continue;
    EXPECT_TRUE(ids.count(e.path().filename().string()))
        << "figures/" << e.path().filename().string()
        << "/ is not in the registry (figures/figure.cc) or not in FIGURES "
           "(BUILD)";
  }
}

}  // namespace
}  // namespace mimetic::experiments
