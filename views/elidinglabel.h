#pragma once

#include <QLabel>

namespace sa::views {

// A one-line label that gives up width before its neighbours: given less
// than its text needs, it draws the text cut with "…", and its tooltip then
// shows the whole text above its own. text() stays the whole text.
class ElidingLabel : public QLabel {
    Q_OBJECT
public:
    using QLabel::QLabel;

    QSize minimumSizeHint() const override;
    // Whether the text is drawn cut at the current width.
    bool isElided() const;
    // The text as drawn.
    QString shownText() const;

protected:
    void paintEvent(QPaintEvent* event) override;
    bool event(QEvent* event) override;
};

} // namespace sa::views
