#pragma once
// A paint device that draws nothing and records every text painted on it
// with its size on screen: the font's pixel size times the painter's
// combined scale. Render a view into it to check how large its text is.

#include <QFont>
#include <QPaintDevice>
#include <QPaintEngine>
#include <QPainter>
#include <QSize>
#include <QString>
#include <QTextItem>
#include <QTransform>

#include <cmath>
#include <vector>

namespace sa::testing {

class TextRecorder : public QPaintDevice {
public:
    struct Text {
        QString text;
        double screen_px = 0;
    };

    explicit TextRecorder(QSize size)
        : size_(size)
        , engine_(this) {}
    ~TextRecorder() override = default;

    QPaintEngine* paintEngine() const override { return &engine_; }
    const std::vector<Text>& texts() const { return texts_; }

protected:
    int metric(PaintDeviceMetric m) const override {
        switch (m) {
        case PdmWidth:
            return size_.width();
        case PdmHeight:
            return size_.height();
        case PdmWidthMM:
            return int(size_.width() * 25.4 / 96);
        case PdmHeightMM:
            return int(size_.height() * 25.4 / 96);
        case PdmNumColors:
            return 1 << 24;
        case PdmDepth:
            return 32;
        case PdmDpiX:
        case PdmDpiY:
        case PdmPhysicalDpiX:
        case PdmPhysicalDpiY:
            return 96;
        case PdmDevicePixelRatio:
            return 1;
        case PdmDevicePixelRatioScaled:
            return int(QPaintDevice::devicePixelRatioFScale());
        default:
            return 0;
        }
    }

private:
    class Engine : public QPaintEngine {
    public:
        explicit Engine(TextRecorder* device)
            : QPaintEngine(AllFeatures)
            , device_(device) {}
        bool begin(QPaintDevice*) override { return true; }
        bool end() override { return true; }
        void updateState(const QPaintEngineState&) override {}
        void drawPixmap(const QRectF&, const QPixmap&, const QRectF&) override {}
        void drawPath(const QPainterPath&) override {}
        void drawPolygon(const QPointF*, int, PolygonDrawMode) override {}
        void drawTextItem(const QPointF&, const QTextItem& item) override {
            const QFont f = item.font();
            const double px = f.pixelSize() > 0 ? f.pixelSize() : f.pointSizeF() * 96.0 / 72.0;
            const QTransform t = painter()->combinedTransform();
            device_->texts_.push_back(
                {item.text(), px * std::sqrt(std::fabs(t.m11() * t.m22() - t.m12() * t.m21()))});
        }
        Type type() const override { return User; }

    private:
        TextRecorder* device_;
    };

    QSize size_;
    mutable Engine engine_;
    std::vector<Text> texts_;
};

} // namespace sa::testing
