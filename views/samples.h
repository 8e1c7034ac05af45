#pragma once
// Where the bundled sample clusters live. Looked up at run time so an
// installed explorer finds them as well as one run from the build tree:
//   1. $SCALEACROSS_SAMPLES (a folder holding scenarios/ or scenario files)
//   2. <prefix>/share/scaleacross/sample_clusters next to the executable
//   3. the source tree the binary was built from (SCALEACROSS_SAMPLES_DIR)

#include <QString>
#include <QStringList>

namespace sa::views {

QString samplesDir();
// The documentation (docs/*.md): the installed copy
// (share/doc/scaleacross), else the source tree's; empty when neither.
QString docsDir();
// Absolute paths of the bundled scenario files, sorted by name.
QStringList sampleScenarios();
// The scenario the explorer opens when started without a file:
// three-buildings-405b.json, else the first scenario found, else empty.
QString defaultScenario();

} // namespace sa::views
