#pragma once
// Writing pictures of views: PNG (at twice the logical size, sharp on a
// slide or a high-DPI screen) or SVG, chosen by the file's suffix. The file
// is written through QSaveFile: a failed or interrupted export never leaves
// a half-written file, and an existing file stays as it was.

#include <QSizeF>
#include <QString>

#include <functional>

class QPainter;
class QWidget;

namespace sa::views {

// `paint` draws the picture into a painter whose coordinates span `size`
// (logical pixels). False with a message naming the path on failure.
// `description` goes into the SVG's <desc>.
bool exportPicture(const QString& path, QSizeF size, const QString& title,
                   const std::function<void(QPainter&)>& paint, QString* error,
                   const QString& description = {});

// A widget as it is on screen (charts, tables, panels).
bool exportWidget(const QString& path, QWidget* widget, const QString& title, QString* error);

} // namespace sa::views
