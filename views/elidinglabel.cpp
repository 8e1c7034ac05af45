#include "elidinglabel.h"

#include <QHelpEvent>
#include <QPainter>
#include <QStyle>
#include <QToolTip>

namespace sa::views {

QSize ElidingLabel::minimumSizeHint() const {
    // Room for "…" and the margins: the layout may squeeze the label to that.
    QSize s = QLabel::minimumSizeHint();
    const QMargins m = contentsMargins();
    s.setWidth(fontMetrics().horizontalAdvance(QStringLiteral("…")) + m.left() + m.right() +
               2 * margin());
    return s;
}

QString ElidingLabel::shownText() const {
    const int room = contentsRect().width() - 2 * margin();
    return fontMetrics().elidedText(text(), Qt::ElideRight, std::max(0, room));
}

bool ElidingLabel::isElided() const {
    return !text().isEmpty() && shownText() != text();
}

void ElidingLabel::paintEvent(QPaintEvent* event) {
    if (!isElided()) {
        QLabel::paintEvent(event);
        return;
    }
    QPainter p(this);
    const QRect r = contentsRect().adjusted(margin(), margin(), -margin(), -margin());
    style()->drawItemText(&p, r, int(alignment()) | Qt::TextSingleLine, palette(), isEnabled(),
                          shownText(), foregroundRole());
}

bool ElidingLabel::event(QEvent* event) {
    if (event->type() == QEvent::ToolTip && isElided()) {
        const QString tip = toolTip().isEmpty() ? text() : text() + QLatin1Char('\n') + toolTip();
        QToolTip::showText(static_cast<QHelpEvent*>(event)->globalPos(), tip, this);
        return true;
    }
    return QLabel::event(event);
}

} // namespace sa::views
