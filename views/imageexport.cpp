#include "imageexport.h"

#include <QBuffer>
#include <QDir>
#include <QImage>
#include <QPainter>
#include <QSaveFile>
#include <QSvgGenerator>
#include <QWidget>

namespace sa::views {

namespace {

bool failWith(QString* error, const QString& message) {
    if (error)
        *error = message;
    return false;
}

} // namespace

bool exportPicture(const QString& path, QSizeF size, const QString& title,
                   const std::function<void(QPainter&)>& paint, QString* error,
                   const QString& description) {
    const QString shown = QDir::toNativeSeparators(path);
    if (size.isEmpty())
        return failWith(error, QStringLiteral("Nothing to export to %1").arg(shown));
    const bool svg = path.endsWith(QLatin1String(".svg"), Qt::CaseInsensitive);
    if (!svg && !path.endsWith(QLatin1String(".png"), Qt::CaseInsensitive))
        return failWith(
            error,
            QStringLiteral("Cannot export %1: the name must end in .png or .svg").arg(shown));
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    if (svg) {
        QSvgGenerator generator;
        generator.setOutputDevice(&buffer);
        generator.setSize(size.toSize());
        generator.setViewBox(QRectF(QPointF(0, 0), size));
        generator.setTitle(title);
        generator.setDescription(description);
        QPainter painter;
        if (!painter.begin(&generator))
            return failWith(error, QStringLiteral("Cannot draw %1").arg(shown));
        painter.setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
        paint(painter);
        painter.end();
    } else {
        QImage image((size * 2).toSize(), QImage::Format_ARGB32_Premultiplied);
        if (image.isNull())
            return failWith(
                error, QStringLiteral("Cannot export %1: the picture is too large").arg(shown));
        image.setDevicePixelRatio(2);
        image.fill(Qt::white);
        {
            QPainter painter(&image);
            painter.setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
            paint(painter);
        }
        image.setText(QStringLiteral("Title"), title);
        if (!image.save(&buffer, "PNG"))
            return failWith(error, QStringLiteral("Cannot encode %1 as PNG").arg(shown));
    }
    buffer.close();
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        return failWith(error,
                        QStringLiteral("Cannot write %1: %2").arg(shown, file.errorString()));
    if (file.write(bytes) != bytes.size()) {
        const QString why = file.errorString();
        file.cancelWriting();
        return failWith(error, QStringLiteral("Cannot write %1: %2").arg(shown, why));
    }
    if (!file.commit())
        return failWith(error,
                        QStringLiteral("Cannot write %1: %2").arg(shown, file.errorString()));
    return true;
}

bool exportWidget(const QString& path, QWidget* widget, const QString& title, QString* error) {
    if (!widget)
        return failWith(error, QStringLiteral("Nothing to export"));
    return exportPicture(
        path, widget->size(), title, [widget](QPainter& painter) { widget->render(&painter); },
        error);
}

} // namespace sa::views
