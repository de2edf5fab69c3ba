package @@PACKAGE@@

import android.content.Context
import android.graphics.Bitmap
import android.graphics.Canvas
import android.graphics.Color
import android.graphics.Paint
import android.graphics.Path
import android.view.MotionEvent
import android.view.View

/** A square canvas the user draws a digit on with a finger. The ink lives in a transparent bitmap. */
class DrawView(context: Context) : View(context) {
    /** Called when the finger lifts: a good moment to classify. */
    var onStrokeFinished: (() -> Unit)? = null

    private val paint = Paint().apply {
        color = Color.BLACK
        style = Paint.Style.STROKE
        strokeCap = Paint.Cap.ROUND
        strokeJoin = Paint.Join.ROUND
        isAntiAlias = false
    }
    private val path = Path()
    private var bitmap: Bitmap? = null
    private var bitmapCanvas: Canvas? = null

    override fun onMeasure(widthMeasureSpec: Int, heightMeasureSpec: Int) {
        val size = MeasureSpec.getSize(widthMeasureSpec)
        setMeasuredDimension(size, size)
    }

    override fun onSizeChanged(w: Int, h: Int, oldw: Int, oldh: Int) {
        bitmap?.recycle()
        val bmp = Bitmap.createBitmap(w, h, Bitmap.Config.ARGB_8888)
        bitmap = bmp
        bitmapCanvas = Canvas(bmp)
        // the same stroke width as labkit.android.draw_strokes: 1/8 of the canvas (thick, like the
        // scanned digits the model learned from)
        paint.strokeWidth = w / 8f
    }

    override fun onDraw(canvas: Canvas) {
        canvas.drawColor(Color.WHITE)
        bitmap?.let { canvas.drawBitmap(it, 0f, 0f, null) }
        canvas.drawPath(path, paint)
    }

    override fun onTouchEvent(event: MotionEvent): Boolean {
        when (event.actionMasked) {
            MotionEvent.ACTION_DOWN -> {
                parent?.requestDisallowInterceptTouchEvent(true)
                path.moveTo(event.x, event.y)
                path.lineTo(event.x, event.y)
            }
            MotionEvent.ACTION_MOVE -> path.lineTo(event.x, event.y)
            MotionEvent.ACTION_UP, MotionEvent.ACTION_CANCEL -> {
                bitmapCanvas?.drawPath(path, paint)
                path.reset()
                performClick()
                onStrokeFinished?.invoke()
            }
            else -> return false
        }
        invalidate()
        return true
    }

    override fun performClick(): Boolean {
        super.performClick()
        return true
    }

    fun clear() {
        bitmap?.eraseColor(Color.TRANSPARENT)
        path.reset()
        invalidate()
    }

    /** The alpha channel (0..255) of every pixel, row by row, with the width and height. */
    fun alpha(): Triple<IntArray, Int, Int>? {
        val bmp = bitmap ?: return null
        val w = bmp.width
        val h = bmp.height
        val pixels = IntArray(w * h)
        bmp.getPixels(pixels, 0, w, 0, 0, w, h)
        for (i in pixels.indices) {
            pixels[i] = pixels[i] ushr 24
        }
        return Triple(pixels, w, h)
    }
}
