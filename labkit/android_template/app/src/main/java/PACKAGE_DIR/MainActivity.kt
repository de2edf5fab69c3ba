package @@PACKAGE@@

import android.app.Activity
import android.os.Build
import android.os.Bundle
import android.view.WindowInsets
import android.view.ViewGroup.LayoutParams.MATCH_PARENT
import android.view.ViewGroup.LayoutParams.WRAP_CONTENT
import android.widget.Button
import android.widget.LinearLayout
import android.widget.RadioButton
import android.widget.RadioGroup
import android.widget.TextView
import java.util.concurrent.ExecutorService
import java.util.concurrent.Executors

/** Draw a digit; see the prediction, its confidence and the inference time; switch CPU/XNNPACK/NNAPI. */
class MainActivity : Activity() {
    companion object {
        /** The model file in app/src/main/assets. */
        const val MODEL_ASSET = @@MODEL_ASSET@@
    }

    private lateinit var classifier: DigitClassifier
    private lateinit var drawView: DrawView
    private lateinit var resultText: TextView
    private var backend = Backend.CPU
    /** Inference runs here, one request at a time, never on the UI thread (a slow backend must not freeze drawing). */
    private val worker: ExecutorService = Executors.newSingleThreadExecutor()

    override fun onCreate(savedInstanceState: Bundle?) {
        super.onCreate(savedInstanceState)
        classifier = DigitClassifier(assets.open(MODEL_ASSET).use { it.readBytes() })

        drawView = DrawView(this).apply { onStrokeFinished = { predict() } }
        resultText = TextView(this).apply {
            textSize = 20f
            text = getString(R.string.draw_prompt)
        }
        val backends = RadioGroup(this).apply { orientation = RadioGroup.HORIZONTAL }
        for (b in Backend.entries) {
            backends.addView(RadioButton(this).apply {
                id = b.ordinal + 1
                text = b.label
            })
        }
        backends.check(backend.ordinal + 1)
        backends.setOnCheckedChangeListener { _, checkedId ->
            backend = Backend.entries[checkedId - 1]
            predict()
        }
        val clear = Button(this).apply {
            text = getString(R.string.clear)
            setOnClickListener {
                drawView.clear()
                resultText.text = getString(R.string.draw_prompt)
            }
        }
        val layout = LinearLayout(this).apply {
            orientation = LinearLayout.VERTICAL
            setPadding(32, 32, 32, 32)
            addView(drawView, LinearLayout.LayoutParams(MATCH_PARENT, WRAP_CONTENT))
            addView(resultText)
            addView(backends)
            addView(clear)
        }
        // Android 15 draws apps edge to edge: pad the layout by the status and navigation bars so the canvas
        // does not sit under them.
        layout.setOnApplyWindowInsetsListener { view, insets ->
            val (left, top, right, bottom) = if (Build.VERSION.SDK_INT >= 30) {
                val bars = insets.getInsets(WindowInsets.Type.systemBars() or WindowInsets.Type.displayCutout())
                listOf(bars.left, bars.top, bars.right, bars.bottom)
            } else {
                @Suppress("DEPRECATION")
                listOf(insets.systemWindowInsetLeft, insets.systemWindowInsetTop,
                       insets.systemWindowInsetRight, insets.systemWindowInsetBottom)
            }
            view.setPadding(32 + left, 32 + top, 32 + right, 32 + bottom)
            insets
        }
        setContentView(layout)
    }

    private fun predict() {
        val (alpha, width, height) = drawView.alpha() ?: return
        val counts = Downsample.toModelInput(alpha, width, height)
        if (counts.all { it == 0 }) return
        val chosen = backend
        resultText.text = getString(R.string.working)
        worker.execute {
            val text = try {
                val p = classifier.classify(counts, chosen)
                getString(R.string.result, p.label, p.confidence * 100f, p.millis, p.backend.label)
            } catch (e: Exception) {
                getString(R.string.unavailable, chosen.label, e.message ?: e.toString())
            }
            runOnUiThread { if (!isDestroyed) resultText.text = text }
        }
    }

    override fun onDestroy() {
        worker.execute { classifier.close() }   // after any inference still running, on the same thread
        worker.shutdown()
        super.onDestroy()
    }
}
